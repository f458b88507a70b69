// Real server processes for tests of several processes behaving as one: the compiled server
// (`quietway serve`, rebuilt from the current sources once per file) on free ports.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../server/src/config.js';
import { storeEnv } from './helpers.js';

/** The `.ts` files under `dir` (relative paths). */
function sources(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[]).filter(
    (f) => f.endsWith('.ts') && !f.endsWith('.d.ts'),
  );
}

/**
 * Compiles the server so the processes run the current sources: skipped when every source's
 * compiled file is newer than the newest source. The suite's global set-up calls it before any
 * test file runs; a file calling it again finds the build current.
 */
export function compileServer(): void {
  const src = path.join(PROJECT_ROOT, 'server', 'src');
  const dist = path.join(PROJECT_ROOT, 'server', 'dist');
  const files = sources(src);
  const newest = Math.max(...files.map((f) => fs.statSync(path.join(src, f)).mtimeMs));
  const current = files.every((f) => {
    const out = path.join(dist, f.replace(/\.ts$/, '.js'));
    return fs.existsSync(out) && fs.statSync(out).mtimeMs > newest;
  });
  if (current) return;
  const tsc = path.join(PROJECT_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', path.join(PROJECT_ROOT, 'server', 'tsconfig.json')], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`tsc failed: ${r.stdout}${r.stderr}`);
}

export interface ServerProcess {
  base: string;
  proc: ChildProcess;
  /** Everything it logged so far. */
  output(): string;
  stop(): void;
}

/**
 * Resolves once the server at `base` has loaded (or failed) every city graph: `quietway serve`
 * listens at once and loads its graphs in the background (`cities_loading` in /health/).
 */
export async function citiesLoaded(base: string, timeoutMs = 120_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const health = (await (await fetch(`${base}/health/`)).json()) as { cities_loading: number };
    if (health.cities_loading === 0) return;
    if (Date.now() > until) throw new Error(`${base} still loads ${health.cities_loading} city graphs`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Starts `quietway serve` on a free port with `env` added; resolves with its base URL once it
 * listens and has loaded its city graphs.
 */
export function serve(env: Record<string, string>): Promise<ServerProcess> {
  const proc = spawn(process.execPath, [path.join(PROJECT_ROOT, 'server', 'dist', 'cli.js'), 'serve'], {
    env: {
      ...process.env,
      QUIETWAY_PORT: '0',
      QUIETWAY_LOG_LEVEL: 'info',
      ...storeEnv(env.QUIETWAY_DATA_DIR),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let listening = false;
  return new Promise((resolve, reject) => {
    const onData = (b: Buffer) => {
      out += b.toString();
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m && !listening) {
        listening = true;
        const base = m[1] as string;
        citiesLoaded(base).then(
          () => resolve({ base, proc, output: () => out, stop: () => proc.kill('SIGKILL') }),
          reject,
        );
      }
    };
    proc.stdout?.on('data', onData);
    proc.stderr?.on('data', onData);
    proc.on('exit', (code) => reject(new Error(`server exited (${code}): ${out}`)));
  });
}
