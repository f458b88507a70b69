// What the Node benchmarks share: paths, the New York graph they run on, random points in Manhattan
// below 42nd Street, and the machine description every results file carries.
import { execFileSync, execSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

export const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
export const shared = process.env.QUIETWAY_SHARED_DATA_DIR ?? path.join(root, '..', 'shared', 'data');

/** Builds the graph of `nyc-manhattan-below-42nd.osm.pbf` into `outDir` (as `nyc.qwg`). */
export function buildNycGraph(outDir) {
  execFileSync(path.join(root, 'target/release/quietway-build-graph'), [
    '--city',
    'nyc',
    '--osm',
    path.join(shared, 'osm/nyc-manhattan-below-42nd.osm.pbf'),
    '--out',
    outDir,
    '--shared-data',
    shared,
    '--quiet',
  ]);
  return path.join(outDir, 'nyc.qwg');
}

/** A deterministic source of random `[lon, lat]` points in Manhattan below 42nd Street. */
export function manhattanPoints(seed) {
  let s = seed;
  const box = [-74.018, 40.7, -73.972, 40.757];
  const rnd = () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
  return () => [box[0] + rnd() * (box[2] - box[0]), box[1] + rnd() * (box[3] - box[1])];
}

/** CPU model, cores and the commit measured. */
export function machine() {
  let commit = '';
  try {
    commit = execSync('git rev-parse --short HEAD', { cwd: root }).toString().trim();
  } catch {}
  return { cpu: os.cpus()[0]?.model, cores: os.cpus().length, commit };
}

/**
 * Serves the recorded Citi Bike feed (2,226 stations, GBFS 1.1) on a loopback port, with the discovery
 * file the recording lacks; resolves to the server (its `gbfs.json` URL from `address().port`).
 */
export async function serveCitiBike() {
  const feedDir = path.join(shared, 'gbfs/citibike-nyc-2024-10-02');
  const gbfs = http.createServer((req, res) => {
    const name = path.basename(new URL(req.url, 'http://x').pathname);
    res.setHeader('content-type', 'application/json');
    if (name === 'gbfs.json') {
      const base = `http://127.0.0.1:${gbfs.address().port}`;
      return res.end(
        JSON.stringify({
          last_updated: Math.floor(Date.now() / 1000),
          ttl: 60,
          version: '1.1',
          data: {
            en: {
              feeds: ['station_information', 'station_status'].map((n) => ({
                name: n,
                url: `${base}/${n}.json`,
              })),
            },
          },
        }),
      );
    }
    const file = path.join(feedDir, name);
    if (!fs.existsSync(file)) {
      res.statusCode = 404;
      return res.end('{}');
    }
    res.end(fs.readFileSync(file));
  });
  await new Promise((r) => gbfs.listen(0, '127.0.0.1', r));
  return gbfs;
}

/**
 * The environment of a benchmark server on loopback: its data folder, the recorded Citi Bike feed
 * served by `gbfs` (see `serveCitiBike`), a random port, and limits out of the way (the load is far
 * above a key's per-minute allowance and a client's connection cap: one load generator).
 */
export function benchServerEnv(dataDir, gbfs) {
  return {
    ...process.env,
    QUIETWAY_DATA_DIR: dataDir,
    QUIETWAY_HOST: '127.0.0.1',
    QUIETWAY_PORT: String(20000 + Math.floor(Math.random() * 20000)),
    QUIETWAY_LOG_LEVEL: 'silent',
    QUIETWAY_SHARED_DATA_DIR: shared,
    QUIETWAY_GBFS_SYSTEMS: JSON.stringify([
      {
        id: 'citibike',
        city: 'nyc',
        url: `http://127.0.0.1:${gbfs.address().port}/gbfs.json`,
        name: 'Citi Bike',
      },
    ]),
    QUIETWAY_RATE_LIMITS: JSON.stringify({
      directions: { key: [1_000_000_000, 60] },
      multimodal: { key: [1_000_000_000, 60] },
    }),
    QUIETWAY_MAX_CONNECTIONS_PER_CLIENT: '0',
  };
}

/**
 * Waits until a server process on `port` answers `/health/` with every city graph loaded
 * (`cities_loading` 0: a server listens at once and loads its graphs in the background), and
 * `ready(health)` holds when given. Throws after `seconds`.
 */
export async function waitForServer(port, { seconds = 300, ready = () => true } = {}) {
  const until = Date.now() + seconds * 1000;
  let last = 'no answer';
  while (Date.now() < until) {
    try {
      const h = await (await fetch(`http://127.0.0.1:${port}/health/`)).json();
      if ((h.cities_loading ?? 0) === 0 && ready(h)) return h;
      last = `cities_loading ${h.cities_loading}`;
    } catch (e) {
      last = e.message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`server on port ${port} not ready after ${seconds} s (${last})`);
}
