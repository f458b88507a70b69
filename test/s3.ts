// A real S3-compatible server for tests: gofakes3 (github.com/johannesboyne/gofakes3), built with
// `go install` from the Go module proxy into .cache/go-bin/ (ignored by git; reused once built),
// started on a free loopback port with its buckets in a temporary folder, and stopped by the caller.
// A test that needs it fails rather than skips when it cannot be built. Why gofakes3 and not MinIO:
// README.md "Image storage".
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../server/src/config.js';
import { tempDir } from './helpers.js';
import { freePort } from './redis.js';

export const GOFAKES3_MODULE = 'github.com/johannesboyne/gofakes3/cmd/gofakes3';
export const GOFAKES3_VERSION = 'v1.2.0';

const GO_BIN_DIR = path.join(PROJECT_ROOT, '.cache', 'go-bin');
/** Versioned, so that a change of version builds again. */
const BINARY = path.join(GO_BIN_DIR, `gofakes3-${GOFAKES3_VERSION}`);

function goTool(): string {
  for (const candidate of [process.env.GO, '/usr/local/go/bin/go', 'go']) {
    if (!candidate) continue;
    if (spawnSync(candidate, ['version']).status === 0) return candidate;
  }
  throw new Error('the S3 tests need Go (https://go.dev/dl/) to build their S3 server, gofakes3');
}

/** The gofakes3 binary, built once (about a minute) and then reused. */
export function ensureGofakes3(): string {
  if (fs.existsSync(BINARY)) return BINARY;
  const go = goTool();
  const gobin = tempDir('quietway-gobin-');
  const r = spawnSync(go, ['install', `${GOFAKES3_MODULE}@${GOFAKES3_VERSION}`], {
    encoding: 'utf8',
    env: { ...process.env, GOBIN: gobin, GOFLAGS: '-mod=mod', CGO_ENABLED: '0' },
    timeout: 15 * 60_000,
  });
  if (r.status !== 0) {
    throw new Error(
      `go install ${GOFAKES3_MODULE}@${GOFAKES3_VERSION} failed: ${r.stderr || r.error?.message}`,
    );
  }
  fs.mkdirSync(GO_BIN_DIR, { recursive: true });
  // Two test files may build at once: each renames its own build into place.
  fs.renameSync(path.join(gobin, 'gofakes3'), BINARY);
  return BINARY;
}

export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** Environment for testConfig() that selects the S3 backend. */
  env: Record<string, string>;
  stop(): void;
}

/** Starts a throw-away S3 server with one bucket; resolves once it answers. */
export async function startS3(bucket = 'quietway-test'): Promise<TestS3> {
  const bin = ensureGofakes3();
  const port = await freePort();
  const dir = tempDir('quietway-s3-');
  const proc: ChildProcess = spawn(
    bin,
    [
      '-host',
      `127.0.0.1:${port}`,
      '-backend',
      'fs',
      '-fs.path',
      dir,
      '-fs.create',
      '-initialbucket',
      bucket,
      '-quiet',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  proc.stdout?.on('data', (b: Buffer) => {
    out += b.toString();
  });
  proc.stderr?.on('data', (b: Buffer) => {
    out += b.toString();
  });
  const exited = new Promise<never>((_, reject) =>
    proc.once('exit', (code) => reject(new Error(`gofakes3 exited (${code}): ${out}`))),
  );
  exited.catch(() => {});
  const endpoint = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 15_000;
  for (;;) {
    const up = await Promise.race([
      fetch(`${endpoint}/${bucket}?list-type=2`)
        .then((r) => r.ok)
        .catch(() => false),
      exited,
    ]);
    if (up) break;
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`gofakes3 did not start: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    endpoint,
    bucket,
    env: {
      QUIETWAY_S3_ENDPOINT: endpoint,
      QUIETWAY_S3_BUCKET: bucket,
      QUIETWAY_S3_ACCESS_KEY_ID: 'quietway-test',
      QUIETWAY_S3_SECRET_ACCESS_KEY: 'quietway-test-secret',
    },
    stop: () => {
      proc.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
