// Acknowledged profile updates and photo uploads survive `kill -9`: the real server process takes a
// burst of each from many riders and is killed part-way; a server restarted on the same data directory
// answers every acknowledged write (the profile holds the last acknowledged value or a later one in
// flight; an acknowledged photo is the profile's photo and is served whole, the start-up sweep of
// left-over files notwithstanding). Reports under the same kill: reports-durability.test.ts.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../server/src/config.js';
import { storeEnv, tempDir } from '../helpers.js';
import { compileServer } from '../processes.js';

let server: ChildProcess | undefined;
const dataDir = tempDir('quietway-kill-');

/** Starts `quietway serve` on a free port of the data directory; resolves with its base URL. */
function serve(): Promise<string> {
  const proc = spawn(process.execPath, [path.join(PROJECT_ROOT, 'server', 'dist', 'cli.js'), 'serve'], {
    env: {
      ...process.env,
      QUIETWAY_DATA_DIR: dataDir,
      ...storeEnv(dataDir),
      QUIETWAY_PORT: '0',
      QUIETWAY_LOG_LEVEL: 'info',
      QUIETWAY_RATE_LIMITS: JSON.stringify({ auth: { ip: [10_000, 60] }, profile: { user: [10_000, 60] } }),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server = proc;
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout?.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1] as string);
    });
    proc.on('exit', (code) => reject(new Error(`server exited (${code}): ${out}`)));
  });
}

async function signUp(base: string, i: number): Promise<string> {
  const res = await fetch(`${base}/auth/v1/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: `rider${i}@example.org`, password: 'long enough pw', name: `R${i}` }),
  });
  expect(res.status).toBe(201);
  return ((await res.json()) as { access_token: string }).access_token;
}

const profile = async (base: string, token: string) =>
  (await (await fetch(`${base}/user/`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
    name: string;
    home_coords: string | null;
    image_url: string | null;
  };

/** A PNG signature and 64 KiB of noise: taken as a PNG, large enough to be in flight at the kill. */
const photo = (): Buffer =>
  Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(65_536)]);

beforeAll(() => {
  // The process runs the compiled server, built from the current sources (test/global-setup.ts).
  compileServer();
}, 180_000);
afterAll(() => {
  server?.kill('SIGKILL');
});

describe('writes under kill -9', () => {
  it('loses no acknowledged profile update or photo upload', async () => {
    let base = await serve();
    const riders = 12;
    const tokens = await Promise.all(Array.from({ length: riders }, (_, i) => signUp(base, i)));

    // Each rider updates their profile over and over (name and home_coords carry a counter) while
    // uploading photos one after another; the process is killed once enough were acknowledged.
    const ackedUpdate = new Array<number>(riders).fill(-1);
    const sentUpdate = new Array<number>(riders).fill(-1);
    const ackedPhoto: ({ url: string; bytes: Buffer } | null)[] = new Array(riders).fill(null);
    const sentPhotos: Map<string, Buffer>[] = Array.from({ length: riders }, () => new Map());
    let acks = 0;
    let killed = false;
    const killAfter = (n: number) => {
      if (!killed && acks >= n) {
        killed = true;
        server?.kill('SIGKILL');
      }
    };
    const updates = async (r: number) => {
      for (let k = 0; !killed && k < 400; k++) {
        sentUpdate[r] = k;
        try {
          const res = await fetch(`${base}/user/`, {
            method: 'PATCH',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[r]}` },
            body: JSON.stringify({ name: `R${r} #${k}`, home_coords: `-74,40.${k}` }),
          });
          if (res.status !== 200) continue;
          ackedUpdate[r] = k;
          acks++;
          killAfter(300);
        } catch {
          return;
        }
      }
    };
    const uploads = async (r: number) => {
      for (let k = 0; !killed && k < 100; k++) {
        const bytes = photo();
        const form = new FormData();
        form.append('photo', new Blob([bytes], { type: 'image/png' }), `p${k}.png`);
        try {
          const res = await fetch(`${base}/user/upload-photo/`, {
            method: 'POST',
            headers: { authorization: `Bearer ${tokens[r]}` },
            body: form,
          });
          const body = (await res.json()) as { image_url?: string };
          if (res.status !== 200 || !body.image_url) continue;
          sentPhotos[r]?.set(body.image_url, bytes);
          ackedPhoto[r] = { url: body.image_url, bytes };
          acks++;
          killAfter(300);
        } catch {
          return;
        }
      }
    };
    await Promise.all(Array.from({ length: riders }, (_, r) => [updates(r), uploads(r)]).flat());
    expect(killed).toBe(true);
    expect(ackedUpdate.every((k) => k >= 0)).toBe(true);
    expect(ackedPhoto.filter(Boolean).length).toBeGreaterThan(riders / 2);

    // A new process on the same data directory (it sweeps left-over upload files as it starts).
    base = await serve();
    for (let r = 0; r < riders; r++) {
      const p = await profile(base, tokens[r] as string);
      const k = Number(/#(\d+)$/.exec(p.name)?.[1]);
      // The last acknowledged update, or the one in flight at the kill: never an earlier one.
      expect(k).toBeGreaterThanOrEqual(ackedUpdate[r] as number);
      expect(k).toBeLessThanOrEqual(sentUpdate[r] as number);
      // The server stores the coordinates as numbers: `40.20` comes back as `40.2`.
      expect(p.home_coords).toBe(`-74,${Number(`40.${k}`)}`);
      const acked = ackedPhoto[r];
      if (!acked) continue;
      // The acknowledged photo is the profile's, unless an upload acknowledged-or-in-flight after it
      // replaced it; whichever it is, the server hands it out whole.
      expect(p.image_url).not.toBeNull();
      const url = p.image_url as string;
      const expected = url === acked.url ? acked.bytes : undefined;
      const served = await fetch(url.replace(/^https?:\/\/[^/]+/, base));
      expect(served.status).toBe(200);
      const got = Buffer.from(await served.arrayBuffer());
      if (expected) expect(got.equals(expected)).toBe(true);
      else {
        // A later upload that was in flight at the kill: stored whole all the same.
        expect(got.length).toBe(65_544);
        expect(sentPhotos[r]?.has(url)).toBe(false);
      }
    }
  }, 180_000);
});
