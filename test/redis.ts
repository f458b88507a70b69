// A real Redis for tests: Debian's `redis-server`, installed with apt-get when missing (a test that
// needs Redis fails rather than skips when it cannot be had), started on a free loopback port with no
// persistence, and stopped by the caller.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import { tempDir } from './helpers.js';

const has = (bin: string) => spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;

function ensureRedisServer(): string {
  if (has('redis-server')) return 'redis-server';
  const sudo = process.getuid?.() === 0 ? [] : ['sudo', '-n'];
  for (const args of [
    ['apt-get', 'update'],
    ['apt-get', 'install', '-y', '--no-install-recommends', 'redis-server'],
  ]) {
    const cmd = [...sudo, ...args];
    const r = spawnSync(cmd[0] as string, cmd.slice(1), {
      encoding: 'utf8',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (r.status !== 0) throw new Error(`${cmd.join(' ')} failed: ${r.stderr || r.error?.message}`);
  }
  if (!has('redis-server')) throw new Error('redis-server still missing after apt-get install');
  return 'redis-server';
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export interface TestRedis {
  url: string;
  stop(): void;
}

/** Starts a throw-away redis-server; resolves once it accepts connections. */
export async function startRedis(): Promise<TestRedis> {
  const bin = ensureRedisServer();
  const port = await freePort();
  const proc: ChildProcess = spawn(
    bin,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      tempDir('quietway-redis-'),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`redis-server did not start: ${out}`)), 10_000);
    proc.stdout?.on('data', (b: Buffer) => {
      out += b.toString();
      if (out.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${code}): ${out}`));
    });
  });
  return { url: `redis://127.0.0.1:${port}`, stop: () => proc.kill('SIGKILL') };
}
