// `quietway build-graph`: runs the Rust pipeline (`quietway-build-graph`) with the server's
// configuration filled in, or, with `--defaults`, builds every city that has extracts; then measures
// how much of the city's polygon the new graph covers and stores it beside the graph.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { type Config, PROJECT_ROOT } from '../config.js';
import { native } from '../native.js';
import { area, cityList } from '../routing/coverage.js';
import { measureDataCoverage, writeDataCoverage } from '../routing/data-coverage.js';

export const PIPELINE_BIN = path.join(PROJECT_ROOT, 'target', 'release', 'quietway-build-graph');

const USAGE = `Usage:
  quietway build-graph --city <id> --osm <file>... [options]
  quietway build-graph --defaults [--missing-only]

--defaults builds every city with extracts in <data>/osm/<city>/ (or <data>/osm/<city>.osm.pbf);
where <data>/osm/ holds none, the sample extracts in the shared data folder are used.
Each build ends with the bbox of the graph's data and how much of the city's polygon it covers
(stored beside the graph as <city>.coverage.json, shown by /health/).
--missing-only (with --defaults) skips cities whose graph is already built.
--out and --shared-data default to <data>/graphs (QUIETWAY_DATA_DIR) and QUIETWAY_SHARED_DATA_DIR.`;

function runPipeline(args: string[]): number {
  if (!fs.existsSync(PIPELINE_BIN)) {
    console.error(
      `quietway: the graph pipeline is not built (${PIPELINE_BIN}); run \`npm run build:native\``,
    );
    return 1;
  }
  const res = spawnSync(PIPELINE_BIN, args, { stdio: 'inherit' });
  return res.status ?? 1;
}

/**
 * The build summary's last lines: the bbox of the graph's data and how much of the city's polygon
 * it covers, measured on the graph just written and stored beside it for /health/.
 */
async function reportCoverage(graphFile: string, summaryJson: string | undefined): Promise<void> {
  try {
    const engine = await native().loadCity(graphFile);
    const s = engine.stats();
    const areas = (JSON.parse(s.coverageJson) as [number, number][][][][]).map((polygons, i) =>
      area(s.id, s.areaNames[i] ?? s.name, polygons),
    );
    const m = await measureDataCoverage(engine, areas);
    const stored = writeDataCoverage(graphFile, m);
    if (summaryJson && fs.existsSync(summaryJson)) {
      // The pipeline's JSON summary gets the same figures.
      const summary = JSON.parse(fs.readFileSync(summaryJson, 'utf8')) as Record<string, unknown>;
      fs.writeFileSync(summaryJson, JSON.stringify({ ...summary, polygon_coverage: m }, null, 2));
    }
    const bbox = m.data_bbox.map((v) => v.toFixed(4)).join(', ');
    console.log(`  data bbox           [${bbox}]`);
    console.log(
      `  polygon covered     ${(m.polygon_share * 100).toFixed(2)} % of ${s.name}'s polygon (${m.covered_cells} of ${m.polygon_cells} cells of ${m.cell_m} m hold a road)${stored ? '' : '; not stored (graph folder not writable)'}`,
    );
  } catch (err) {
    console.error(`  polygon coverage not measured: ${(err as Error).message}`);
  }
}

/** Runs the pipeline, then reports the coverage of the graph it wrote. */
async function buildOne(args: string[]): Promise<number> {
  const value = (flag: string) => {
    const i = args.indexOf(flag);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const status = runPipeline(args);
  const [city, out] = [value('--city'), value('--out')];
  const file = city && out && !args.includes('--places-only') ? path.join(out, `${city}.qwg`) : null;
  if (status === 0 && file && fs.existsSync(file)) await reportCoverage(file, value('--summary-json'));
  return status;
}

const OSM_FILE = /\.(osm\.pbf|pbf|osm|osm\.bz2)$/;

/** Extracts a self-hoster dropped into <data>/osm for a city. */
function ownExtracts(osmDir: string, city: string): string[] {
  const folder = path.join(osmDir, city);
  if (fs.existsSync(folder) && fs.statSync(folder).isDirectory()) {
    return fs
      .readdirSync(folder)
      .filter((f) => OSM_FILE.test(f))
      .map((f) => path.join(folder, f))
      .sort();
  }
  if (!fs.existsSync(osmDir)) return [];
  return fs
    .readdirSync(osmDir)
    .filter((f) => OSM_FILE.test(f) && f.startsWith(`${city}.`))
    .map((f) => path.join(osmDir, f));
}

export async function buildGraphCommand(config: Config, argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(USAGE);
    // The pipeline's own help lists every option it accepts, so the two never drift apart.
    if (fs.existsSync(PIPELINE_BIN)) {
      const res = spawnSync(PIPELINE_BIN, ['--help'], { encoding: 'utf8' });
      const options = res.stdout.slice(res.stdout.indexOf('Options:'));
      if (res.status === 0 && options.startsWith('Options:')) console.log(`\n${options.trimEnd()}`);
    }
    return 0;
  }
  const common = ['--out', config.graphDir, '--shared-data', config.sharedDataDir];
  if (!argv.includes('--defaults')) {
    if (argv.length === 0) {
      console.error(USAGE);
      return 2;
    }
    const extra = argv.includes('--out') ? ['--shared-data', config.sharedDataDir] : common;
    return buildOne([...argv, ...extra]);
  }
  const missingOnly = argv.includes('--missing-only');
  // The city list the pipeline embeds, read from its source so a new city's samples need no rebuild.
  const cities = cityList();
  const anyOwn = Object.keys(cities).some((c) => ownExtracts(config.osmDir, c).length > 0);
  let failures = 0;
  for (const [id, city] of Object.entries(cities)) {
    const files = anyOwn
      ? ownExtracts(config.osmDir, id)
      : (city.sample_extracts ?? [])
          .map((f) => path.join(config.sharedDataDir, f))
          .filter((f) => fs.existsSync(f));
    if (files.length === 0) continue;
    const hasGraph = fs.existsSync(path.join(config.graphDir, `${id}.qwg`));
    const hasPlaces = fs.existsSync(path.join(config.graphDir, `${id}.places.ndjson`));
    if (missingOnly && hasGraph && hasPlaces) {
      console.log(`${city.name}: graph present, skipped`);
      continue;
    }
    // A graph built before place indexes existed gets just its place index.
    const only = missingOnly && hasGraph ? ['--places-only'] : [];
    if ((await buildOne(['--city', id, '--osm', ...files, ...common, ...only])) !== 0) failures += 1;
  }
  return failures === 0 ? 0 : 1;
}
