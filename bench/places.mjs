// Local place search: builds the place indexes of the New York, London and Chicago extracts with the
// pipeline, loads them as the server does, and times autocomplete as riders type: every prefix of
// a set of real destinations (from the first letter on), plus misspellings, each with an origin in
// its city. Timed twice: the index query alone, and the whole request through the server
// (`POST /functions/v1/place-search/autocomplete`: credentials, validation, both calls with a bbox,
// the JSON reply). In-run baseline: a plain scan of every name for the typed words. Prints a table,
// writes bench/results/places.json. `--quick` runs fewer rounds.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { machine, root, shared } from './common.mjs';

const quick = process.argv.includes('--quick');
const ROUNDS = quick ? 3 : 15;

const { LocalPlaceIndex, readPlaceFile, words } = await import(
  path.join(root, 'server/dist/places/local.js')
);
const { buildApp } = await import(path.join(root, 'server/dist/app.js'));
const { loadConfig } = await import(path.join(root, 'server/dist/config.js'));
const { issueKey } = await import(path.join(root, 'server/dist/auth/keys.js'));

const CITIES = {
  nyc: { osm: 'osm/nyc-manhattan-below-42nd.osm.pbf', origin: { latitude: 40.7359, longitude: -74.0036 } },
  london: { osm: 'osm/london-clerkenwell.osm.pbf', origin: { latitude: 51.5226, longitude: -0.1048 } },
  chicago: { osm: 'osm/chicago-loop.osm.pbf', origin: { latitude: 41.8818, longitude: -87.6298 } },
};
const TYPED = {
  nyc: [
    'broadway',
    'hudson river greenway',
    'washington square park',
    'west 4th street',
    'union square',
    'bleecker street',
    'canal st',
    'chelsea market',
  ],
  london: ['farringdon road', 'barbican centre', "st john's gate", 'clerkenwell green', 'smithfield market'],
  chicago: ['willis tower', 'michigan avenue', 'millennium park', 'state street', 'the bean'],
};
const MISSPELT = {
  nyc: ['brodway', 'greenwhich street', 'bleeckre st', 'hudosn river', 'washingon square'],
  london: ['farringdn road', 'barbicen'],
  chicago: ['wilis tower', 'michigna avenue'],
};

const out = fs.mkdtempSync(path.join(os.tmpdir(), 'quietway-places-bench-'));
const builds = [];
for (const [city, c] of Object.entries(CITIES)) {
  const start = performance.now();
  const stdout = execFileSync(
    path.join(root, 'target/release/quietway-build-graph'),
    [
      '--city',
      city,
      '--osm',
      path.join(shared, c.osm),
      '--out',
      out,
      '--shared-data',
      shared,
      '--places-only',
      '--quiet',
    ],
    { encoding: 'utf8' },
  );
  const m = /(\d+) entries \((\d+) streets, (\d+) points of interest, (\d+) places\) in ([\d.]+) s/.exec(
    stdout,
  );
  builds.push({
    city,
    extract: path.basename(c.osm),
    entries: Number(m?.[1]),
    streets: Number(m?.[2]),
    pois: Number(m?.[3]),
    places: Number(m?.[4]),
    seconds: Number(m?.[5]),
    wallSeconds: (performance.now() - start) / 1000,
  });
}

const loadStart = performance.now();
const { index } = LocalPlaceIndex.load(out);
const loadMs = performance.now() - loadStart;

// Every prefix as it is typed, and the misspellings whole.
const queries = [];
for (const [city, phrases] of Object.entries(TYPED)) {
  for (const p of phrases) {
    for (let i = 1; i <= p.length; i++) {
      if (p[i - 1] === ' ') continue;
      queries.push({
        city,
        input: p.slice(0, i),
        kind: i <= 2 ? 'one or two letters' : 'three letters or more',
      });
    }
  }
}
for (const [city, phrases] of Object.entries(MISSPELT)) {
  for (const p of phrases) queries.push({ city, input: p, kind: 'misspelt' });
}

// The baseline: every name scanned for all typed words (the last as a prefix of a word).
const all = Object.keys(CITIES).flatMap(
  (city) => readPlaceFile(path.join(out, `${city}.places.ndjson`)).entries,
);
const allWords = all.map((e) => words([e.name, ...(e.alt_names ?? [])].join(' ')));
function scan(input) {
  const typed = words(input);
  const last = typed.at(-1) ?? '';
  const hits = [];
  for (let i = 0; i < all.length; i++) {
    const w = allWords[i];
    if (typed.slice(0, -1).every((t) => w.includes(t)) && w.some((x) => x.startsWith(last)))
      hits.push(all[i]);
  }
  hits.sort((a, b) => b.importance - a.importance);
  return hits.slice(0, 5);
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const summary = (xs) => ({
  n: xs.length,
  p50_ms: quantile(xs, 0.5),
  p90_ms: quantile(xs, 0.9),
  p99_ms: quantile(xs, 0.99),
  max_ms: Math.max(...xs),
});

function time(fn) {
  const byKind = {};
  const every = [];
  for (let round = 0; round < ROUNDS + 1; round++) {
    for (const q of queries) {
      const start = performance.now();
      fn(q);
      const ms = performance.now() - start;
      if (round === 0) continue; // warm-up
      every.push(ms);
      const list = byKind[q.kind] ?? [];
      list.push(ms);
      byKind[q.kind] = list;
    }
  }
  return {
    all: summary(every),
    byKind: Object.fromEntries(Object.entries(byKind).map(([k, v]) => [k, summary(v)])),
  };
}

const indexTimes = time((q) =>
  index.query({ input: q.input, sessionToken: 'b', origin: CITIES[q.city].origin }),
);
const scanTimes = time((q) => scan(q.input));

// Through the server: the app built on the same folder, requests injected (no socket).
const config = loadConfig({
  QUIETWAY_DATA_DIR: fs.mkdtempSync(path.join(os.tmpdir(), 'quietway-places-bench-data-')),
  QUIETWAY_LOG_LEVEL: 'silent',
  QUIETWAY_RATE_LIMITS: '{"place_search":{"key":[100000000,60]}}',
});
fs.mkdirSync(config.graphDir, { recursive: true });
for (const f of fs.readdirSync(out)) fs.copyFileSync(path.join(out, f), path.join(config.graphDir, f));
const app = await buildApp({ config });
const key = issueKey(app.repos, { kind: 'service', name: 'bench', source: null, legacyV1: false }).key;
const httpTimes = { all: [], kinds: {} };
for (let round = 0; round < ROUNDS + 1; round++) {
  for (const q of queries) {
    const o = CITIES[q.city].origin;
    const payload = {
      input: q.input,
      sessionToken: 'bench-session',
      origin: o,
      bbox: [o.longitude - 0.02, o.latitude - 0.015, o.longitude + 0.02, o.latitude + 0.015],
    };
    const start = performance.now();
    const res = await app.inject({
      method: 'POST',
      url: '/functions/v1/place-search/autocomplete',
      headers: { apikey: key },
      payload,
    });
    const ms = performance.now() - start;
    if (res.statusCode !== 200) throw new Error(`${q.input}: ${res.statusCode} ${res.body}`);
    if (round === 0) continue;
    httpTimes.all.push(ms);
    const list = httpTimes.kinds[q.kind] ?? [];
    list.push(ms);
    httpTimes.kinds[q.kind] = list;
  }
}
await app.close();
index.close();
fs.rmSync(out, { recursive: true, force: true });

const request = {
  all: summary(httpTimes.all),
  byKind: Object.fromEntries(Object.entries(httpTimes.kinds).map(([k, v]) => [k, summary(v)])),
};

const f = (x) => x.toFixed(3);
console.log('| extract | entries | streets | points of interest | places | index build (s) |');
console.log('|---|---|---|---|---|---|');
for (const b of builds) {
  console.log(
    `| ${b.extract} | ${b.entries} | ${b.streets} | ${b.pois} | ${b.places} | ${b.seconds.toFixed(2)} |`,
  );
}
console.log(`\nServer load of the three indexes (SQLite FTS5 in memory): ${loadMs.toFixed(0)} ms\n`);
console.log(`${queries.length} queries × ${ROUNDS} rounds (every prefix as typed, and misspellings)\n`);
console.log('| measure | queries | p50 (ms) | p90 (ms) | p99 (ms) |');
console.log('|---|---|---|---|---|');
const row = (name, s) =>
  console.log(`| ${name} | ${s.n} | ${f(s.p50_ms)} | ${f(s.p90_ms)} | ${f(s.p99_ms)} |`);
row('index query, all', indexTimes.all);
for (const [k, s] of Object.entries(indexTimes.byKind)) row(`index query, ${k}`, s);
row('whole request (both calls), all', request.all);
for (const [k, s] of Object.entries(request.byKind)) row(`whole request, ${k}`, s);
row('baseline: plain scan of every name', scanTimes.all);
const ratio = indexTimes.all.p50_ms / scanTimes.all.p50_ms;
console.log(`\nindex / scan p50 ratio: ${ratio.toFixed(3)}; target p50 < 5 ms`);

fs.mkdirSync(path.join(root, 'bench/results'), { recursive: true });
fs.writeFileSync(
  path.join(root, 'bench/results/places.json'),
  JSON.stringify(
    {
      name: 'places',
      machine: machine(),
      rounds: ROUNDS,
      queries: queries.length,
      builds,
      load_ms: loadMs,
      index_query: indexTimes,
      request,
      baseline_scan: scanTimes,
      index_over_scan_p50: ratio,
      target_p50_ms: 5,
    },
    null,
    2,
  ),
);
