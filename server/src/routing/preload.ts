// Native loads of city graphs started before the server's own modules are imported: a whole city
// takes about two seconds to load on libuv's pool, and importing and registering the server takes
// more than one on the main thread beside it. `quietway serve` starts the first graphs here; the
// engine plugin takes each over when it comes to that file (see loadCityFile).
import fs from 'node:fs';
import path from 'node:path';
import type { Engine } from '../../../addon/index.js';
import { native } from '../native.js';

const GRAPH_EXT = '.qwg';

/** The graph files of a folder (only those of the cities in `only`: QUIETWAY_CITIES), sorted. */
export function graphFiles(graphDir: string, only: readonly string[] | null = null): string[] {
  if (!fs.existsSync(graphDir)) return [];
  return fs
    .readdirSync(graphDir)
    .filter((f) => f.endsWith(GRAPH_EXT) && (!only || only.includes(f.slice(0, -GRAPH_EXT.length))))
    .sort()
    .map((f) => path.join(graphDir, f));
}

const started = new Map<string, Promise<Engine>>();

function startLoad(file: string, queryGraphMb?: number): Promise<Engine> {
  const weightingFile = file.replace(/\.qwg$/, '.weighting.json');
  const weighting = fs.existsSync(weightingFile) ? fs.readFileSync(weightingFile, 'utf8') : undefined;
  return native().loadCity(file, weighting, queryGraphMb);
}

/**
 * Starts loading `files` now. A failure is reported where the load is taken over (loadNative),
 * not as an unhandled rejection before it.
 */
export function preload(files: readonly string[], queryGraphMb?: number): void {
  for (const file of files) {
    if (started.has(file)) continue;
    let load: Promise<Engine>;
    try {
      load = startLoad(file, queryGraphMb);
    } catch (err) {
      load = Promise.reject(err);
    }
    load.catch(() => {});
    started.set(file, load);
  }
}

/** The engine of one graph file: the load `preload` started for it, else one started now. */
export function loadNative(file: string, queryGraphMb?: number): Promise<Engine> {
  const load = started.get(file);
  if (load) {
    started.delete(file);
    return load;
  }
  return startLoad(file, queryGraphMb);
}
