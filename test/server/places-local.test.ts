// The embedded `local` place search on the real shared extracts (New York, London, Chicago), with
// acceptance cases in the style of Pelias' ("must appear in the top N"), and the local provider's
// response shape, bounded call, distances and details.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { issueKey } from '../../server/src/auth/keys.js';
import { PIPELINE_BIN } from '../../server/src/commands/build-graph.js';
import { editDistance, words } from '../../server/src/places/local.js';
import { SHARED_DATA, testConfig } from '../helpers.js';

let app: FastifyInstance;
let emptyApp: FastifyInstance;
let key = '';
const TOKEN = '5f1c2d3e-4b5a-4c6d-8e7f-0a1b2c3d4e5f';

/** Builds just the place index of a city with the real pipeline. */
function buildPlaces(city: string, osm: string, outDir: string): void {
  const res = spawnSync(
    PIPELINE_BIN,
    [
      '--city',
      city,
      '--osm',
      path.join(SHARED_DATA, osm),
      '--out',
      outDir,
      '--shared-data',
      SHARED_DATA,
      '--places-only',
      '--quiet',
    ],
    { encoding: 'utf8' },
  );
  if (res.status !== 0) throw new Error(`place index build failed: ${res.stderr}`);
}

const NYC = { latitude: 40.7359, longitude: -74.0036 }; // West Village
const LONDON = { latitude: 51.5226, longitude: -0.1048 }; // Clerkenwell
const CHICAGO = { latitude: 41.8818, longitude: -87.6298 }; // the Loop

interface Prediction {
  placeId: string;
  text: { text: string };
  structuredFormat: { mainText: { text: string }; secondaryText?: { text: string } };
  types?: string[];
  distanceMeters?: number;
}

async function search(
  input: string,
  origin?: { latitude: number; longitude: number },
  bbox?: number[],
): Promise<{ unrestricted: Prediction[]; restricted: Prediction[] | null }> {
  const res = await app.inject({
    method: 'POST',
    url: '/functions/v1/place-search/autocomplete',
    headers: { apikey: key },
    payload: { input, sessionToken: TOKEN, ...(origin ? { origin } : {}), ...(bbox ? { bbox } : {}) },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

beforeAll(async () => {
  const config = testConfig();
  buildPlaces('nyc', 'osm/nyc-manhattan-below-42nd.osm.pbf', config.graphDir);
  buildPlaces('london', 'osm/london-clerkenwell.osm.pbf', config.graphDir);
  buildPlaces('chicago', 'osm/chicago-loop.osm.pbf', config.graphDir);
  app = await buildApp({ config });
  key = issueKey(app.repos, { kind: 'publishable', name: 'web', source: null, legacyV1: false }).key;
  emptyApp = await buildApp({ config: testConfig() });
}, 180_000);
afterAll(() => Promise.all([app.close(), emptyApp.close()]));

// Pelias-style acceptance: the expected name must appear in the top N.
const CASES: [string, string, string, number, { latitude: number; longitude: number }][] = [
  ['prefix of a long avenue', 'broad', 'Broadway', 3, NYC],
  ['a greenway, half typed', 'hudson riv', 'Hudson River Greenway', 3, NYC],
  ['a misspelling (one letter missing)', 'brodway', 'Broadway', 5, NYC],
  ['a misspelling (a letter too many)', 'greenwhich street', 'Greenwich Street', 5, NYC],
  ['a swap of two letters', 'bleeckre st', 'Bleecker Street', 5, NYC],
  ['abbreviations', 'w 4th st', 'West 4th Street', 3, NYC],
  ['an alternative name (alt_name)', 'loisaida', 'Alphabet City', 3, NYC],
  ['a park', 'washington square park', 'Washington Square Park', 3, NYC],
  ['London: a road', 'farringdon rd', 'Farringdon Road', 3, LONDON],
  ['London: an apostrophe left out', 'st johns gate', "St John's Gate", 3, LONDON],
  ['London: a landmark, half typed', 'barbican cen', 'Barbican Centre', 3, LONDON],
  ['Chicago: a tower, half typed', 'willis tow', 'Willis Tower', 3, CHICAGO],
  ['Chicago: an alternative name', 'the bean', 'Cloud Gate', 3, CHICAGO],
  ['Chicago: an avenue', 'michigan ave', 'Michigan Avenue', 3, CHICAGO],
];

describe('local place search: acceptance on real extracts', () => {
  it.each(CASES)('%s: "%s" finds %s in the top %i', async (_what, input, expected, topN, origin) => {
    const { unrestricted } = await search(input, origin);
    const names = unrestricted.map((p) => p.structuredFormat.mainText.text);
    const rank = names.findIndex((n) => n === expected || n.endsWith(` ${expected}`));
    expect(rank, `${input} → ${names.join(' | ')}`).toBeGreaterThanOrEqual(0);
    expect(rank).toBeLessThan(topN);
  });

  it('ranks by distance to origin: the same words find each city’s own street first', async () => {
    const fromLondon = await search('farringdon', LONDON);
    expect(fromLondon.unrestricted[0]?.placeId).toMatch(/^osm:london:/);
    const fromChicago = await search('state st', CHICAGO);
    expect(fromChicago.unrestricted[0]?.placeId).toMatch(/^osm:chicago:/);
    expect(fromChicago.unrestricted[0]?.structuredFormat.mainText.text).toMatch(/State Street/);
  });
});

describe('local place search: the response', () => {
  it('answers predictions in the spec shape, with distances only when origin is sent', async () => {
    const { unrestricted, restricted } = await search('hudson riv', NYC);
    expect(restricted).toBeNull();
    expect(unrestricted.length).toBeGreaterThan(0);
    expect(unrestricted.length).toBeLessThanOrEqual(5);
    for (const p of unrestricted) {
      expect(p.placeId).toMatch(/^osm:nyc:[nwr]\d+$/);
      expect(p.text.text.startsWith(p.structuredFormat.mainText.text)).toBe(true);
      expect(p.types?.length).toBeGreaterThan(0);
      expect(p.distanceMeters).toBeGreaterThanOrEqual(0);
      expect(Object.values(p)).not.toContain(null);
    }
    const greenway = unrestricted.find((p) => p.structuredFormat.mainText.text === 'Hudson River Greenway');
    expect(greenway?.types).toEqual(['route']);
    expect(greenway?.structuredFormat.secondaryText?.text).toContain('New York City');
    const noOrigin = await search('hudson riv');
    for (const p of noOrigin.unrestricted) expect(p.distanceMeters).toBeUndefined();
  });

  it('bounds the second call to bbox; an empty box answers an empty list, not null', async () => {
    // A box around Union Square.
    const box = [-73.995, 40.73, -73.985, 40.74];
    const { unrestricted, restricted } = await search('union sq', NYC, box);
    expect(unrestricted.length).toBeGreaterThan(0);
    expect(restricted?.length).toBeGreaterThan(0);
    for (const p of restricted ?? []) {
      const res = await app.inject({
        method: 'GET',
        url: `/functions/v1/place-search/details?placeId=${encodeURIComponent(p.placeId)}`,
        headers: { apikey: key },
      });
      const { latitude, longitude } = res.json().location;
      expect(longitude).toBeGreaterThanOrEqual(box[0] as number);
      expect(latitude).toBeGreaterThanOrEqual(box[1] as number);
      expect(longitude).toBeLessThanOrEqual(box[2] as number);
      expect(latitude).toBeLessThanOrEqual(box[3] as number);
    }
    // Broadway is not in the middle of the Hudson.
    const river = await search('broadway', NYC, [-74.03, 40.73, -74.02, 40.74]);
    expect(river.restricted).toEqual([]);
  });

  it('resolves a prediction with details; an unknown place answers 404', async () => {
    const { unrestricted } = await search('hudson river greenway', NYC);
    const id = unrestricted[0]?.placeId as string;
    const res = await app.inject({
      method: 'GET',
      url: `/functions/v1/place-search/details?placeId=${encodeURIComponent(id)}&sessionToken=${TOKEN}`,
      headers: { apikey: key },
    });
    expect(res.statusCode).toBe(200);
    const d = res.json();
    expect(d).toEqual({
      placeId: id,
      displayName: 'Hudson River Greenway',
      formattedAddress: expect.stringContaining('Hudson River Greenway'),
      location: { latitude: expect.any(Number), longitude: expect.any(Number) },
      types: ['route'],
    });
    expect(d.location.longitude).toBeGreaterThan(-74.03);
    expect(d.location.longitude).toBeLessThan(-73.99);
    const unknown = await app.inject({
      method: 'GET',
      url: '/functions/v1/place-search/details?placeId=osm:nyc:w1',
      headers: { apikey: key },
    });
    expect(unknown.statusCode).toBe(404);
  });

  it('answers an input of punctuation only with no predictions', async () => {
    const { unrestricted } = await search('?!');
    expect(unrestricted).toEqual([]);
  });

  it('answers 503 while no place index has been built', async () => {
    const emptyKey = issueKey(emptyApp.repos, {
      kind: 'service',
      name: 's',
      source: null,
      legacyV1: false,
    }).key;
    const res = await emptyApp.inject({
      method: 'POST',
      url: '/functions/v1/place-search/autocomplete',
      headers: { apikey: emptyKey },
      payload: { input: 'broadway', sessionToken: TOKEN },
    });
    expect(res.statusCode).toBe(503);
    expect(res.json().error).toMatch(/build-graph/);
  });
});

describe('local place search: words and edits', () => {
  it('folds case, diacritics and apostrophes', () => {
    expect(words("St George's Café, ÉCOLE")).toEqual(['st', 'georges', 'cafe', 'ecole']);
  });

  it('counts edits and swaps of neighbours, stopping past the limit', () => {
    expect(editDistance('brodway', 'broadway', 2)).toBe(1);
    expect(editDistance('bleeckre', 'bleecker', 2)).toBe(1);
    expect(editDistance('greenwhich', 'greenwich', 2)).toBe(1);
    expect(editDistance('hudson', 'hudson', 1)).toBe(0);
    expect(editDistance('hudson', 'madison', 1)).toBe(2);
  });
});
