// Bundles the map pages (web/) with MapLibre GL JS from node_modules into build/web/: one script per
// page, their CSS (MapLibre's own included), the page shells and MapLibre's worker. Nothing is
// fetched at run time from anywhere but the server itself. Run by `npm run build:web`.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'build', 'web');
fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });

await esbuild.build({
  absWorkingDir: root,
  entryPoints: { map: 'web/map.ts', route: 'web/route.ts' },
  bundle: true,
  format: 'esm',
  splitting: true,
  target: 'es2022',
  minify: true,
  sourcemap: true,
  outdir: out,
  chunkNames: 'chunk-[hash]',
  logLevel: 'warning',
  legalComments: 'linked',
});
// MapLibre starts its tile workers from this file, found beside the bundle (setWorkerUrl).
const dist = path.join(root, 'node_modules', 'maplibre-gl', 'dist');
fs.copyFileSync(path.join(dist, 'maplibre-gl-worker.mjs'), path.join(out, 'maplibre-gl-worker.mjs'));
for (const page of ['map.html', 'route.html'])
  fs.copyFileSync(path.join(root, 'web', page), path.join(out, page));
// Brotli and gzip copies of the scripts and styles, served to browsers that accept them (MapLibre is
// about 1.6 MB of script, 0.4 MB in brotli).
for (const file of fs.readdirSync(out).filter((f) => /\.(js|mjs|css)$/.test(f))) {
  const body = fs.readFileSync(path.join(out, file));
  fs.writeFileSync(
    path.join(out, `${file}.br`),
    zlib.brotliCompressSync(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 9 } }),
  );
  fs.writeFileSync(path.join(out, `${file}.gz`), zlib.gzipSync(body, { level: 9 }));
}
console.log(`map pages bundled into ${path.relative(root, out)}/`);
