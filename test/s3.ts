// A real S3-compatible server for tests: gofakes3 (github.com/johannesboyne/gofakes3), built with
// `go install` from the Go module proxy into .cache/go-bin/ (ignored by git; reused once built),
// started on a free loopback port with its buckets in a temporary folder, and stopped by the caller.
// A test that needs it fails rather than skips when it cannot be built. Why gofakes3 and not MinIO:
// README.md "Test". QUIETWAY_TEST_MINIO=<path of a minio binary> runs the same tests against MinIO
// instead (which, unlike gofakes3, checks request signatures).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { CreateBucketCommand, PutBucketPolicyCommand, S3Client } from '@aws-sdk/client-s3';
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

/** Waits until `url` answers 2xx, or the process exits, or 15 s pass. */
async function waitUp(proc: ChildProcess, url: string, what: string, output: () => string): Promise<void> {
  const exited = new Promise<never>((_, reject) =>
    proc.once('exit', (code) => reject(new Error(`${what} exited (${code}): ${output()}`))),
  );
  exited.catch(() => {});
  const deadline = Date.now() + 15_000;
  for (;;) {
    const up = await Promise.race([
      fetch(url)
        .then((r) => r.ok)
        .catch(() => false),
      exited,
    ]);
    if (up) return;
    if (Date.now() > deadline) {
      proc.kill('SIGKILL');
      throw new Error(`${what} did not start: ${output()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

function collect(proc: ChildProcess): () => string {
  let out = '';
  const add = (b: Buffer) => {
    out = (out + b.toString()).slice(-4000);
  };
  proc.stdout?.on('data', add);
  proc.stderr?.on('data', add);
  return () => out;
}

const CREDENTIALS = { accessKeyId: 'quietway-test', secretAccessKey: 'quietway-test-secret' };

function testS3(endpoint: string, bucket: string, proc: ChildProcess, dir: string): TestS3 {
  return {
    endpoint,
    bucket,
    env: {
      QUIETWAY_S3_ENDPOINT: endpoint,
      QUIETWAY_S3_BUCKET: bucket,
      QUIETWAY_S3_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
      QUIETWAY_S3_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
    },
    stop: () => {
      proc.kill('SIGKILL');
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** MinIO from a binary the caller built, with a bucket that anyone may read (as the docs advise). */
async function startMinio(bin: string, bucket: string): Promise<TestS3> {
  const port = await freePort();
  const dir = tempDir('quietway-minio-');
  const endpoint = `http://127.0.0.1:${port}`;
  const proc = spawn(bin, ['server', dir, '--address', `127.0.0.1:${port}`, '--quiet'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      MINIO_ROOT_USER: CREDENTIALS.accessKeyId,
      MINIO_ROOT_PASSWORD: CREDENTIALS.secretAccessKey,
      MINIO_BROWSER: 'off',
    },
  });
  await waitUp(proc, `${endpoint}/minio/health/live`, 'minio', collect(proc));
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: CREDENTIALS,
  });
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
    await client.send(
      new PutBucketPolicyCommand({
        Bucket: bucket,
        Policy: JSON.stringify({
          Version: '2012-10-17',
          Statement: [
            {
              Effect: 'Allow',
              Principal: '*',
              Action: ['s3:GetObject'],
              Resource: [`arn:aws:s3:::${bucket}/*`],
            },
          ],
        }),
      }),
    );
  } finally {
    client.destroy();
  }
  return testS3(endpoint, bucket, proc, dir);
}

/** Starts a throw-away S3 server with one bucket; resolves once it answers. */
export async function startS3(bucket = 'quietway-test'): Promise<TestS3> {
  const minio = process.env.QUIETWAY_TEST_MINIO;
  if (minio) return startMinio(minio, bucket);
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
  const endpoint = `http://127.0.0.1:${port}`;
  await waitUp(proc, `${endpoint}/${bucket}?list-type=2`, 'gofakes3', collect(proc));
  return testS3(endpoint, bucket, proc, dir);
}
