// A throw-away PostgreSQL cluster, for the tests (test/postgres.ts) and the scale benchmark
// (bench/scale-out.mjs): Debian's `postgresql`, installed with apt-get when missing (fails, never skips,
// when it cannot be had), initialised in a temporary directory, started on a free loopback port, and
// removed by stop(). PostgreSQL refuses to run as root, so as root the cluster belongs to the
// `postgres` account (made by Debian's package) and its commands run through runuser.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const BIN_ROOT = '/usr/lib/postgresql';

/** The newest installed server's bin directory, if any. */
function installedBin() {
  if (!fs.existsSync(BIN_ROOT)) return null;
  const versions = fs
    .readdirSync(BIN_ROOT)
    .filter((v) => fs.existsSync(path.join(BIN_ROOT, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(BIN_ROOT, versions[0], 'bin') : null;
}

function ensurePostgres() {
  const found = installedBin();
  if (found) return found;
  const sudo = process.getuid?.() === 0 ? [] : ['sudo', '-n'];
  for (const args of [
    ['apt-get', 'update'],
    ['apt-get', 'install', '-y', '--no-install-recommends', 'postgresql'],
  ]) {
    const cmd = [...sudo, ...args];
    const r = spawnSync(cmd[0], cmd.slice(1), {
      encoding: 'utf8',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    if (r.status !== 0) throw new Error(`${cmd.join(' ')} failed: ${r.stderr || r.error?.message}`);
  }
  const bin = installedBin();
  if (!bin) throw new Error(`PostgreSQL still missing under ${BIN_ROOT} after apt-get install`);
  return bin;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * Starts a cluster; resolves with the superuser's URL of its `postgres` database and stop().
 * @param {{ durable?: boolean }} [options] durable: keep fsync on (off by default: throw-away data;
 *   a killed *server process* still loses nothing PostgreSQL acknowledged, only a machine crash would)
 */
export async function startPostgres(options = {}) {
  const bin = ensurePostgres();
  const root = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'quietway-pg-'));
  const data = path.join(dir, 'data');
  if (root) spawnSync('chown', ['-R', 'postgres:postgres', dir]);
  const as = (cmd, args) => {
    const exe = path.join(bin, cmd);
    const argv = root ? ['runuser', '-u', 'postgres', '--', exe, ...args] : [exe, ...args];
    const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', cwd: dir });
    if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr || r.stdout || r.error?.message}`);
  };
  as('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync']);
  const port = await freePort();
  const settings = [
    `-p ${port}`,
    "-c listen_addresses='127.0.0.1'",
    `-c unix_socket_directories='${dir}'`,
    '-c max_connections=400',
    ...(options.durable ? [] : ['-c fsync=off', '-c full_page_writes=off']),
  ];
  const start = () =>
    as('pg_ctl', [
      '-D',
      data,
      '-l',
      path.join(dir, 'log'),
      '-o',
      settings.join(' '),
      '-w',
      '-t',
      '60',
      'start',
    ]);
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    // An outage: the server stops (its connections are cut) and comes back with its data.
    halt: () => as('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']),
    resume: start,
    stop: () => {
      try {
        // Not running (halted and not resumed): nothing to stop, only files to remove.
        if (fs.existsSync(path.join(data, 'postmaster.pid'))) {
          as('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']);
        }
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
