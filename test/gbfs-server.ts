// A real HTTP server on 127.0.0.1 that serves the recorded GBFS feeds of ../shared/data/gbfs (the
// discovery files rewritten to point at itself), hand-written feeds, a failing feed (500) and a slow
// one (answers after a delay). The feed client cannot tell it from an operator's server.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { SHARED_DATA } from './helpers.js';

export type Served =
  | { file: string }
  | { json: unknown }
  | { status: number }
  | { delayMs: number; json: unknown };

export interface GbfsTestServer {
  base: string;
  /** Replaces (or adds) what a path answers. */
  set(pathname: string, what: Served): void;
  /** Requests seen per path. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

export const GBFS_DATA = path.join(SHARED_DATA, 'gbfs');

export async function startGbfsServer(routes: Record<string, Served> = {}): Promise<GbfsTestServer> {
  const table = new Map(Object.entries(routes));
  const hits = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    const p = new URL(req.url ?? '/', 'http://x').pathname;
    hits.set(p, (hits.get(p) ?? 0) + 1);
    const what = table.get(p);
    const send = (status: number, body: string | Buffer) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(body);
    };
    if (!what) return send(404, '{"error":"not found"}');
    if ('file' in what) return send(200, fs.readFileSync(what.file));
    if ('status' in what) return send(what.status, '{"error":"upstream failure"}');
    if ('delayMs' in what) {
      const t = setTimeout(() => {
        timers.delete(t);
        if (!res.destroyed) send(200, JSON.stringify(what.json));
      }, what.delayMs);
      timers.add(t);
      return;
    }
    send(200, JSON.stringify(what.json));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    set: (p, what) => table.set(p, what),
    hits,
    close: () => {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      return new Promise((r) => server.close(() => r()));
    },
  };
}

/**
 * A GBFS 1.x/2.x discovery file listing `feeds` (names) at `<base>/<prefix>/<name>.json`; recorded
 * systems without their own discovery file (Citi Bike's recording) get one written like this.
 */
export function discovery(base: string, prefix: string, feeds: string[], version = '2.3'): unknown {
  return {
    last_updated: Math.floor(Date.now() / 1000),
    ttl: 60,
    version,
    data: { en: { feeds: feeds.map((name) => ({ name, url: `${base}/${prefix}/${name}.json` })) } },
  };
}

/** Routes for a recorded folder: each of its JSON files at `/<prefix>/<file>`. */
export function recorded(folder: string, prefix: string): Record<string, Served> {
  const out: Record<string, Served> = {};
  for (const f of fs.readdirSync(path.join(GBFS_DATA, folder))) {
    if (f.endsWith('.json')) out[`/${prefix}/${f}`] = { file: path.join(GBFS_DATA, folder, f) };
  }
  return out;
}

/** A recorded discovery file with the operator's feed URLs pointed at the test server. */
export function rewrittenDiscovery(folder: string, base: string, prefix: string): unknown {
  const body = JSON.parse(fs.readFileSync(path.join(GBFS_DATA, folder, 'gbfs.json'), 'utf8'));
  for (const lang of Object.values(body.data) as { feeds: { name: string; url: string }[] }[]) {
    for (const f of lang.feeds) f.url = `${base}/${prefix}/${path.basename(new URL(f.url).pathname)}`;
  }
  return body;
}
