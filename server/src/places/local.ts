// The `local` place-search provider, the embedded default: the place indexes the graph pipeline
// writes beside each city graph (`<city>.places.ndjson`: streets, points of interest and places
// with their alternative names), held in an in-memory SQLite FTS5 index. That gives what Photon
// offers at this scale without its 64 GB: prefix search on the last word typed (FTS5 prefix
// indexes), typo tolerance (a second query where words not found are widened to the indexed words
// within one edit, two from 8 letters), weighted columns (name over alternative names and
// abbreviations over address and district), and a ranking that mixes BM25 with the feature's
// importance and its distance from `origin`, computed inside SQLite so only the best rows reach
// JavaScript.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { NotConfiguredError } from '../upstream.js';
import type { AutocompleteQuery, PlaceDetails, PlacePrediction, PlaceProvider } from './types.js';

/** The file format version this server reads (graph-pipeline/src/places.rs `FORMAT_VERSION`). */
const FORMAT_VERSION = 1;

export interface PlaceEntry {
  id: string;
  kind: 'street' | 'poi' | 'place';
  name: string;
  alt_names?: string[];
  category: string;
  lon: number;
  lat: number;
  address?: string;
  locality?: string;
  district?: string;
  importance: number;
}

interface IndexedPlace extends PlaceEntry {
  city: string;
  placeId: string;
}

/** Predictions per call, as many as Google's autocomplete gives. */
const MAX_PREDICTIONS = 5;
/** Distance at which the distance factor halves the score (with `origin`). */
const DISTANCE_HALF_KM = 5;
/** A street of the same name as a better-ranked one within this distance is the same street. */
const SAME_STREET_M = 3000;
/** Points of interest of one name and kind this close are one (a station's several nodes). */
const SAME_POI_M = 300;

/** Common street-name abbreviations, indexed both ways so `w 4th st` finds West 4th Street. */
const ABBREVIATIONS: [string, string[]][] = [
  ['street', ['st']],
  ['avenue', ['ave', 'av']],
  ['road', ['rd']],
  ['boulevard', ['blvd']],
  ['place', ['pl']],
  ['drive', ['dr']],
  ['lane', ['ln']],
  ['square', ['sq']],
  ['parkway', ['pkwy']],
  ['terrace', ['ter']],
  ['court', ['ct']],
  ['highway', ['hwy']],
  ['saint', ['st']],
  ['west', ['w']],
  ['east', ['e']],
  ['north', ['n']],
  ['south', ['s']],
];
const EXPANSIONS = new Map<string, string[]>();
for (const [full, shorts] of ABBREVIATIONS) {
  for (const s of shorts) {
    EXPANSIONS.set(full, [...(EXPANSIONS.get(full) ?? []), s]);
    EXPANSIONS.set(s, [...(EXPANSIONS.get(s) ?? []), full]);
  }
}

/** Words of a text, lower case, without diacritics or apostrophes (`St George's` = `st georges`). */
export function words(text: string): string[] {
  return text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .replace(/['’]/g, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

/** The other spellings of a name's words (`West 4th St` → `w street`), indexed in their own column. */
function abbreviations(names: string[]): string {
  const out = new Set<string>();
  for (const n of names) for (const w of words(n)) for (const x of EXPANSIONS.get(w) ?? []) out.add(x);
  return [...out].join(' ');
}

/**
 * Optimal-string-alignment distance (edits and swaps of neighbours), or `max + 1` as soon as it
 * must exceed `max`.
 */
export function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const width = b.length + 1;
  // Three rows of one reused buffer: this runs against every indexed word of a similar length.
  if (rowBuffer.length < 3 * width) rowBuffer = new Int32Array(6 * width);
  const rows = rowBuffer;
  let prev2 = 0;
  let prev = width;
  let cur = 2 * width;
  for (let j = 0; j <= b.length; j++) rows[prev + j] = j;
  for (let i = 1; i <= a.length; i++) {
    rows[cur] = i;
    let rowMin = i;
    const ai = a.charCodeAt(i - 1);
    for (let j = 1; j <= b.length; j++) {
      const bj = b.charCodeAt(j - 1);
      let v = Math.min(
        (rows[prev + j] as number) + 1,
        (rows[cur + j - 1] as number) + 1,
        (rows[prev + j - 1] as number) + (ai === bj ? 0 : 1),
      );
      if (i > 1 && j > 1 && ai === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === bj) {
        v = Math.min(v, (rows[prev2 + j - 2] as number) + 1);
      }
      rows[cur + j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return rows[prev + b.length] as number;
}
let rowBuffer = new Int32Array(96);

/** A word with one letter left out, each way. */
function deletions(word: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < word.length; i++) out.push(word.slice(0, i) + word.slice(i + 1));
  return out;
}

/** Edits a typed word may hold: none under 4 letters, one from 4, two from 8. */
const maxEdits = (word: string) => (word.length >= 8 ? 2 : word.length >= 4 ? 1 : 0);

function haversineM(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const rad = Math.PI / 180;
  const dLat = (lat2 - lat1) * rad;
  const dLon = (lon2 - lon1) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * 6_371_008.8 * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Google-style place types for an OSM category. */
const POI_TYPES: Record<string, string> = {
  'amenity=cafe': 'cafe',
  'amenity=restaurant': 'restaurant',
  'amenity=fast_food': 'meal_takeaway',
  'amenity=bar': 'bar',
  'amenity=pub': 'bar',
  'amenity=bank': 'bank',
  'amenity=pharmacy': 'pharmacy',
  'amenity=hospital': 'hospital',
  'amenity=school': 'school',
  'amenity=university': 'university',
  'amenity=library': 'library',
  'amenity=place_of_worship': 'place_of_worship',
  'amenity=bicycle_rental': 'bicycle_rental',
  'amenity=bicycle_parking': 'bicycle_parking',
  'amenity=theatre': 'performing_arts_theater',
  'amenity=cinema': 'movie_theater',
  'shop=bicycle': 'bicycle_store',
  'shop=supermarket': 'supermarket',
  'leisure=park': 'park',
  'leisure=garden': 'park',
  'tourism=museum': 'museum',
  'tourism=hotel': 'lodging',
  'tourism=attraction': 'tourist_attraction',
  'railway=station': 'train_station',
  'railway=halt': 'train_station',
  'public_transport=station': 'transit_station',
};
const PLACE_TYPES: Record<string, string[]> = {
  'place=city': ['locality', 'political'],
  'place=town': ['locality', 'political'],
  'place=borough': ['sublocality', 'political'],
  'place=suburb': ['sublocality', 'political'],
  'place=neighbourhood': ['neighborhood', 'political'],
  'place=quarter': ['neighborhood', 'political'],
};

export function typesOf(p: PlaceEntry): string[] {
  if (p.kind === 'street') return ['route'];
  if (p.kind === 'place') return PLACE_TYPES[p.category] ?? ['locality', 'political'];
  const value = p.category.split('=')[1] ?? '';
  const type = POI_TYPES[p.category] ?? (p.category.startsWith('shop=') ? 'store' : value);
  return [...new Set([type, 'point_of_interest', 'establishment'])].filter(Boolean);
}

/** The second line of a prediction: address, district and city, whichever are known. */
function secondaryText(p: PlaceEntry): string | undefined {
  const parts = [p.address, p.district, p.locality].filter(
    (x, i, all): x is string => !!x && x !== p.name && all.indexOf(x) === i,
  );
  return parts.length > 0 ? parts.join(', ') : undefined;
}

export interface LocalIndexStats {
  cities: { city: string; entries: number }[];
  entries: number;
  buildMs: number;
}

/** Reads a place index file; throws on a file that is not one. */
export function readPlaceFile(file: string): { city: string; cityName: string; entries: PlaceEntry[] } {
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  const header = JSON.parse(lines[0] ?? '{}') as {
    format?: string;
    version?: number;
    city?: string;
    city_name?: string;
  };
  if (header.format !== 'quietway-places' || !header.city) {
    throw new Error(`${file}: not a Quietway place index`);
  }
  if (header.version !== FORMAT_VERSION) {
    throw new Error(
      `${file}: place index version ${header.version}, this server reads ${FORMAT_VERSION}; rebuild the graph`,
    );
  }
  const entries: PlaceEntry[] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.length > 0) entries.push(JSON.parse(line) as PlaceEntry);
  }
  return { city: header.city, cityName: header.city_name ?? header.city, entries };
}

/** Rows ranked in SQLite before the duplicates are dropped in JavaScript. */
const CANDIDATES = 40;
/** Fuzzy matches count for this much of an exact one. */
const FUZZY_WEIGHT = 0.5;
/** A single typed word this short is matched against names only, without text ranking. */
const SHORT_PREFIX = 2;
/** Points of interest this important are offered from the first letter typed. */
const NOTABLE_IMPORTANCE = 0.45;
/** Kilometres per degree of latitude. */
const KM_PER_DEGREE = 111.195;

/** The in-memory index over every city's place file. */
export class LocalPlaceIndex {
  private readonly places: IndexedPlace[] = [];
  private readonly byPlaceId = new Map<string, IndexedPlace>();
  private readonly db = new Database(':memory:');
  /**
   * Typo tolerance after SymSpell: every indexed word under itself and under each of its
   * one-letter deletions, so the words a few edits from a typed one are found by looking up the
   * typed word's own deletions instead of comparing it with the whole vocabulary.
   */
  private readonly byDeletion = new Map<string, string[]>();
  private readonly vocabularySet = new Set<string>();
  /** Beginnings of indexed words, to tell a half-typed word from a misspelt one. */
  private readonly beginningSet = new Set<string>();
  private readonly search: Database.Statement;
  private readonly searchNear: Database.Statement;
  private readonly browse: Database.Statement;
  private readonly browseNear: Database.Statement;
  readonly stats: LocalIndexStats;

  constructor(files: { city: string; entries: PlaceEntry[] }[]) {
    const start = performance.now();
    const cities: LocalIndexStats['cities'] = [];
    const db = this.db;
    db.exec(`
      CREATE TABLE place (id INTEGER PRIMARY KEY, lon REAL NOT NULL, lat REAL NOT NULL, weight REAL NOT NULL);
      CREATE VIRTUAL TABLE place_text USING fts5(
        name, alt, abbr, context,
        tokenize = 'unicode61 remove_diacritics 2', prefix = '1 2 3'
      );
      CREATE VIRTUAL TABLE place_words USING fts5vocab(place_text, 'row');
      -- Streets, places and notable points of interest, for the first letter or two typed.
      CREATE VIRTUAL TABLE notable_text USING fts5(
        name, tokenize = 'unicode61 remove_diacritics 2', prefix = '1 2'
      );
    `);
    const insertPlace = db.prepare('INSERT INTO place (id, lon, lat, weight) VALUES (?, ?, ?, ?)');
    const insertText = db.prepare(
      'INSERT INTO place_text (rowid, name, alt, abbr, context) VALUES (?, ?, ?, ?, ?)',
    );
    const insertNotable = db.prepare('INSERT INTO notable_text (rowid, name) VALUES (?, ?)');
    const clean = (t: string) => t.replace(/['’]/g, '');
    db.transaction(() => {
      for (const f of files) {
        for (const e of f.entries) {
          const placeId = `osm:${f.city}:${e.id}`;
          const id = this.places.length;
          const p: IndexedPlace = { ...e, city: f.city, placeId };
          this.byPlaceId.set(placeId, p);
          this.places.push(p);
          const alts = e.alt_names ?? [];
          // Importance counts twice: Broadway should come before a building called Broad Street.
          insertPlace.run(id, e.lon, e.lat, (0.2 + e.importance) ** 2);
          insertText.run(
            id,
            clean(e.name),
            clean(alts.join(' ')),
            abbreviations([e.name, ...alts]),
            clean([e.address, e.district].filter(Boolean).join(' ')),
          );
          if (e.kind !== 'poi' || e.importance >= NOTABLE_IMPORTANCE) insertNotable.run(id, clean(e.name));
        }
        cities.push({ city: f.city, entries: f.entries.length });
      }
    })();
    for (const { term } of db.prepare('SELECT term FROM place_words').all() as { term: string }[]) {
      this.vocabularySet.add(term);
      for (let len = 1; len <= term.length; len++) this.beginningSet.add(term.slice(0, len));
      if (term.length < 4) continue;
      for (const key of [term, ...deletions(term)]) {
        const list = this.byDeletion.get(key);
        if (list) list.push(term);
        else this.byDeletion.set(key, [term]);
      }
    }
    // BM25 (negated: higher is better) over the weighted columns, times the importance, divided by
    // the distance factor; the bounding box is a plain range test.
    const select = (score: string, table = 'place_text') =>
      db.prepare(`
        SELECT p.id AS id, ${score} AS score
        FROM ${table} JOIN place p ON p.id = ${table}.rowid
        WHERE ${table} MATCH @match
          AND p.lon BETWEEN @minLon AND @maxLon AND p.lat BETWEEN @minLat AND @maxLat
        ORDER BY score DESC LIMIT ${CANDIDATES}`);
    const bm25 = '-bm25(place_text, 6.0, 4.0, 3.0, 1.0) * p.weight';
    const distanceFactor = `(1 + sqrt(((p.lat - @lat) * ${KM_PER_DEGREE}) * ((p.lat - @lat) * ${KM_PER_DEGREE})
        + ((p.lon - @lon) * @kmPerLon) * ((p.lon - @lon) * @kmPerLon)) / ${DISTANCE_HALF_KM})`;
    this.search = select(bm25);
    this.searchNear = select(`${bm25} / ${distanceFactor}`);
    this.browse = select('p.weight', 'notable_text');
    this.browseNear = select(`p.weight / ${distanceFactor}`, 'notable_text');
    this.stats = { cities, entries: this.places.length, buildMs: performance.now() - start };
  }

  /** Loads every `<city>.places.ndjson` in a folder; files that fail are reported, not fatal. */
  static load(dir: string): { index: LocalPlaceIndex; failures: { file: string; error: string }[] } {
    const failures: { file: string; error: string }[] = [];
    const files: { city: string; entries: PlaceEntry[] }[] = [];
    const names = fs.existsSync(dir)
      ? fs
          .readdirSync(dir)
          .filter((f) => f.endsWith('.places.ndjson'))
          .sort()
      : [];
    for (const name of names) {
      const file = path.join(dir, name);
      try {
        files.push(readPlaceFile(file));
      } catch (err) {
        failures.push({ file, error: (err as Error).message });
      }
    }
    return { index: new LocalPlaceIndex(files), failures };
  }

  get size(): number {
    return this.places.length;
  }

  /**
   * Indexed words within the allowed edits of a typed one: one edit from 4 letters, and from 8
   * letters the two-edit words that share a one-letter deletion with it (most two-letter typos).
   */
  private similarWords(word: string): string[] {
    const max = maxEdits(word);
    if (max === 0) return [];
    const keys = new Set([word, ...deletions(word)]);
    if (max > 1) for (const d of deletions(word)) for (const dd of deletions(d)) keys.add(dd);
    const out = new Set<string>();
    for (const k of keys) {
      for (const w of this.byDeletion.get(k) ?? []) {
        if (!out.has(w) && w !== word && editDistance(word, w, max) <= max) out.add(w);
      }
    }
    return [...out];
  }

  private run(match: string, query: AutocompleteQuery, textRank = true): { id: number; score: number }[] {
    const box = query.restriction ?? [-180, -90, 180, 90];
    const params = { match, minLon: box[0], minLat: box[1], maxLon: box[2], maxLat: box[3] };
    const o = query.origin;
    const near = o
      ? {
          lat: o.latitude,
          lon: o.longitude,
          kmPerLon: KM_PER_DEGREE * Math.cos((o.latitude * Math.PI) / 180),
        }
      : { lat: 0, lon: 0, kmPerLon: 0 };
    const statement = textRank ? (o ? this.searchNear : this.search) : o ? this.browseNear : this.browse;
    return statement.all(o ? { ...params, ...near } : params) as { id: number; score: number }[];
  }

  /** Ranked matches for what was typed; `restriction` keeps only those inside the box. */
  query(query: AutocompleteQuery, limit = MAX_PREDICTIONS): { place: IndexedPlace; distanceM?: number }[] {
    const typed = words(query.input);
    const lastWord = typed.at(-1);
    if (lastWord === undefined) return [];
    // Whole words match exactly, the last one as a prefix too (it may be half typed).
    const term = (w: string, last: boolean) => `"${w}"${last ? '*' : ''}`;
    let rows: { id: number; score: number }[];
    if (typed.length === 1 && lastWord.length <= SHORT_PREFIX) {
      // One or two letters begin thousands of words: the names of streets, places and notable
      // points of interest only, ranked by importance and distance (BM25 tells little apart here).
      rows = this.run(term(lastWord, true), query, false);
    } else if (typed.length === 1) {
      // One word: names, alternative names and abbreviations; addresses only narrow a search
      // (`starbucks broadway`), alone they would match every shop on Broadway.
      rows = this.run(`{name alt abbr} : ${term(lastWord, true)}`, query);
    } else {
      rows = this.run(typed.map((w, i) => term(w, i === typed.length - 1)).join(' AND '), query);
    }
    if (rows.length < limit) {
      // Typo tolerance: a word found nowhere in the index (the last: that nothing starts with)
      // also matches the indexed words within its allowed edits.
      let widened = false;
      const fuzzy = typed
        .map((w, i) => {
          const last = i === typed.length - 1;
          const known = last ? this.beginningSet.has(w) : this.vocabularySet.has(w);
          const similar = known ? [] : this.similarWords(w);
          if (similar.length === 0) return term(w, last);
          widened = true;
          return `(${[w, ...similar].map((x) => term(x, last)).join(' OR ')})`;
        })
        .join(' AND ');
      if (widened) {
        const seen = new Set(rows.map((r) => r.id));
        const more = this.run(fuzzy, query)
          .filter((r) => !seen.has(r.id))
          .map((r) => ({ id: r.id, score: r.score * FUZZY_WEIGHT }));
        rows = [...rows, ...more].sort((a, b) => b.score - a.score);
      }
    }
    const out: IndexedPlace[] = [];
    for (const r of rows) {
      if (out.length >= limit) break;
      const place = this.places[r.id] as IndexedPlace;
      const dup = out.some(
        (o) =>
          o.name === place.name &&
          o.category === place.category &&
          haversineM(o.lat, o.lon, place.lat, place.lon) <
            (place.kind === 'street' ? SAME_STREET_M : SAME_POI_M),
      );
      if (!dup) out.push(place);
    }
    const o = query.origin;
    return out.map((place) => ({
      place,
      ...(o ? { distanceM: haversineM(o.latitude, o.longitude, place.lat, place.lon) } : {}),
    }));
  }

  place(placeId: string): IndexedPlace | undefined {
    return this.byPlaceId.get(placeId);
  }

  close(): void {
    this.db.close();
  }
}

/** The local provider over an index that may still be loading. */
export class LocalPlaceProvider implements PlaceProvider {
  readonly name = 'local';

  constructor(private readonly index: () => Promise<LocalPlaceIndex>) {}

  async autocomplete(query: AutocompleteQuery): Promise<PlacePrediction[]> {
    const index = await this.index();
    if (index.size === 0) {
      throw new NotConfiguredError(
        'Place search has no index yet: build a city graph (quietway build-graph) and restart',
      );
    }
    return index.query(query).map(({ place, distanceM }) => {
      const secondary = secondaryText(place);
      return {
        placeId: place.placeId,
        text: { text: secondary ? `${place.name}, ${secondary}` : place.name },
        structuredFormat: {
          mainText: { text: place.name },
          ...(secondary ? { secondaryText: { text: secondary } } : {}),
        },
        types: typesOf(place),
        ...(distanceM === undefined ? {} : { distanceMeters: Math.round(distanceM) }),
      };
    });
  }

  async details(placeId: string): Promise<PlaceDetails | null> {
    const place = (await this.index()).place(placeId);
    if (!place) return null;
    const secondary = secondaryText(place);
    return {
      placeId: place.placeId,
      displayName: place.name,
      // A point of interest with a street address is at that address; anything else is named.
      formattedAddress:
        place.address && secondary ? secondary : [place.name, secondary].filter(Boolean).join(', '),
      location: { latitude: place.lat, longitude: place.lon },
      types: typesOf(place),
    };
  }
}
