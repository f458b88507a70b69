// schemathesis (PyPI) against the real server's OpenAPI document (/docs/json): every operation, once
// with an app key and once with an admin session, generated valid and invalid requests. No answer may
// be a 5xx, have a status the document does not list, or break its documented schema or media type;
// a method a path does not document must answer 405 with an `Allow` that lists the documented ones.
// schemathesis is installed into a venv under build/ (ignored) by this test; it fails, never skips,
// when that is impossible.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../server/src/config.js';
import { DEFAULT_RATE_LIMITS } from '../../server/src/ratelimit.js';
import { WEB_BUILD } from '../../server/src/routes/maps/index.js';
import { buildGraph, SHARED_DATA, storeEnv, tempDir } from '../helpers.js';
import { citiesLoaded, compileServer } from '../processes.js';

const SCHEMATHESIS = 'schemathesis==4.32.5';
const VENV = path.join(PROJECT_ROOT, 'build', 'schemathesis-venv');
const ST = path.join(VENV, 'bin', 'schemathesis');
const CLI = path.join(PROJECT_ROOT, 'server', 'dist', 'cli.js');

const dataDir = tempDir('quietway-st-');
let server: ChildProcess | undefined;
let weather: http.Server | undefined;
let base = '';
let env: NodeJS.ProcessEnv = {};

function run(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; timeout?: number; cwd?: string } = {},
) {
  const r = spawnSync(cmd, args, {
    cwd: opts.cwd,
    encoding: 'utf8',
    env: opts.env ?? process.env,
    timeout: opts.timeout ?? 600_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.error) throw r.error;
  return r;
}

/** The schemathesis CLI in its own venv (made once, reused while it holds the pinned version). */
function installSchemathesis(): void {
  if (fs.existsSync(ST) && run(ST, ['--version']).stdout.includes(SCHEMATHESIS.split('==')[1] as string))
    return;
  fs.rmSync(VENV, { recursive: true, force: true });
  // The newest Python there is: CPython 3.11's `ast.parse` is not safe across threads (hypothesis
  // describes strategies with it and failed a run with "AST constructor recursion depth mismatch").
  const python =
    ['python3.13', 'python3.12'].find((p) => spawnSync(p, ['--version']).status === 0) ?? 'python3';
  const venv = run(python, ['-m', 'venv', VENV]);
  if (venv.status !== 0) throw new Error(`${python} -m venv failed: ${venv.stderr}`);
  const pip = run(path.join(VENV, 'bin', 'pip'), ['install', '--quiet', SCHEMATHESIS]);
  if (pip.status !== 0) throw new Error(`pip install ${SCHEMATHESIS} failed: ${pip.stdout}${pip.stderr}`);
}

/** Open-Meteo's forecast answer, hand-written, for any point (the weather endpoint's upstream). */
async function startWeather(): Promise<string> {
  weather = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        latitude: Number(url.searchParams.get('latitude')),
        longitude: Number(url.searchParams.get('longitude')),
        current_units: { temperature_2m: '°F', wind_speed_10m: 'mp/h' },
        current: {
          time: '2026-11-23T15:00',
          interval: 900,
          temperature_2m: 51.2,
          apparent_temperature: 48.1,
          relative_humidity_2m: 67,
          weather_code: 3,
          wind_speed_10m: 9.46,
          wind_direction_10m: 225,
        },
      }),
    );
  });
  await new Promise<void>((r) => weather?.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(weather.address() as AddressInfo).port}`;
}

/** `quietway serve` on a free port; resolves with its base URL once its city graph has loaded. */
function serve(): Promise<string> {
  server = spawn(process.execPath, [CLI, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let listening = false;
    server?.stdout?.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m && !listening) {
        listening = true;
        citiesLoaded(m[1] as string).then(() => resolve(m[1] as string), reject);
      }
    });
    server?.on('exit', (code) => reject(new Error(`server exited (${code}): ${out}`)));
  });
}

/** Runs schemathesis over the whole document; returns its exit status and output. */
function schemathesis(header: string, extra: string[] = []) {
  const r = run(
    ST,
    [
      'run',
      `${base}/docs/json`,
      '--url',
      base,
      '--header',
      header,
      '--checks',
      // unsupported_method: every method a path does not document (TRACE, QUERY, PUT…) answers 405
      // with `Allow`; allow_header_conformance: that `Allow` lists what the path documents.
      'not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,unsupported_method,allow_header_conformance',
      '--phases',
      'examples,coverage,fuzzing',
      '--max-examples',
      '10',
      '--seed',
      '21',
      '--no-shrink',
      // One worker: several threads trip CPython 3.11's thread-unsafe `ast.parse` inside hypothesis.
      '--workers',
      '1',
      '--request-timeout',
      '20',
      ...extra,
    ],
    // Run in build/: schemathesis keeps a cache folder (.schemathesis) where it runs.
    { env: { ...process.env, NO_COLOR: '1', SCHEMATHESIS_TELEMETRY: 'false' }, timeout: 240_000, cwd: VENV },
  );
  const output = `${r.stdout}${r.stderr}`;
  // What it covered, in the test log: operations, generated cases, warnings.
  console.log(
    `schemathesis (${header.split(':')[0]}):\n${output.slice(output.lastIndexOf('API Operations:'))}`,
  );
  // Requests refused by rate limits test nothing.
  expect(output).not.toMatch(/Rate limited/);
  return { status: r.status, output };
}

beforeAll(async () => {
  installSchemathesis();
  // The process runs the compiled server and serves the bundled map pages: build both.
  compileServer();
  // (`npm run build` bundles the pages; bundled again only where they are missing, so that this test
  // never rewrites them under the map-page test running beside it.)
  if (!['map.html', 'route.html'].every((f) => fs.existsSync(path.join(WEB_BUILD, f)))) {
    const web = run(process.execPath, [path.join(PROJECT_ROOT, 'scripts', 'build-web.mjs')]);
    if (web.status !== 0) throw new Error(`build-web failed: ${web.stdout}${web.stderr}`);
  }

  buildGraph('nyc', [path.join(SHARED_DATA, 'osm/nyc-soho-tiny.osm.pbf')], path.join(dataDir, 'graphs'), 25);
  // Rate limits out of the way: a run that meets only 429s would test nothing.
  const limits = Object.fromEntries(
    Object.entries(DEFAULT_RATE_LIMITS).map(([cls, buckets]) => [
      cls,
      Object.fromEntries(Object.keys(buckets).map((b) => [b, [1_000_000, 60]])),
    ]),
  );
  env = {
    ...process.env,
    QUIETWAY_DATA_DIR: dataDir,
    ...storeEnv(dataDir),
    QUIETWAY_PORT: '0',
    QUIETWAY_LOG_LEVEL: 'info',
    QUIETWAY_RATE_LIMITS: JSON.stringify(limits),
    QUIETWAY_OPEN_METEO_URL: await startWeather(),
    QUIETWAY_REPORT_ANALYSIS_MS: '0',
  };
  base = await serve();
}, 900_000);

afterAll(async () => {
  server?.kill('SIGKILL');
  await new Promise((r) => (weather ? weather.close(r) : r(undefined)));
});

describe('schemathesis against /docs/json', () => {
  it('finds nothing with an app key', () => {
    const created = run(
      process.execPath,
      [CLI, 'keys', 'create', '--kind', 'app', '--name', 'schemathesis'],
      {
        env,
      },
    );
    const key = /qw_app_\S+/.exec(created.stdout)?.[0];
    expect(key, created.stdout + created.stderr).toBeTruthy();
    const r = schemathesis(`apikey: ${key}`);
    expect(r.status, r.output).toBe(0);
  }, 300_000);

  it('finds nothing with an admin session', async () => {
    const email = 'st-admin@example.org';
    const password = 'long enough pw';
    const signup = await fetch(`${base}/auth/v1/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password, name: 'Admin' }),
    });
    expect(signup.status).toBe(201);
    const promoted = run(process.execPath, [CLI, 'users', 'promote', email], { env });
    expect(promoted.status, promoted.stderr).toBe(0);
    const signin = await fetch(`${base}/auth/v1/token?grant_type=password`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    const { access_token, user } = (await signin.json()) as { access_token: string; user: { role: string } };
    expect(user.role).toBe('admin');
    // Signing out would end the session the rest of the run uses (the app-key run covers the route).
    const r = schemathesis(`authorization: Bearer ${access_token}`, ['--exclude-path', '/auth/v1/logout']);
    expect(r.status, r.output).toBe(0);
    // An admin may call every operation: none may have met only 401/403 (an app key cannot reach the
    // rider's and admin's operations, so its run is not held to this).
    expect(r.output).not.toMatch(/Authentication failed/);
  }, 300_000);
});
