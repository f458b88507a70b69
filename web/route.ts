// /map/route: the route planner. Waypoints by map click or place search (two to 25), SuperSafe and
// Direct side by side (distance, time, climb, metres per safety class, the turn-by-turn list; a step
// zooms the map to it), departure time and the night override, the explanation sentence
// (POST /explain-supersafe/) and, where the city has bike-share, the bike-share options with their legs
// on the map (POST /multi-modal/v2/), and a GPX download of the chosen route. It signs
// the rider in with the password grant: routing and place search need a session (decisions.md).
import type { ExpressionSpecification, LayerSpecification } from '@maplibre/maplibre-gl-style-spec';
import type { GeoJSONSource, Map as MapLibreMap } from 'maplibre-gl';
import { LngLatBounds, Marker } from 'maplibre-gl';
import {
  byId,
  type City,
  CLASSES,
  classColour,
  classColourExpr,
  classLabel,
  classWidthExpr,
  el,
  getJson,
  km,
  loadCities,
  makeMap,
  minutes,
  roadsStyle,
  swatch,
} from './common.js';

type LonLat = [number, number];
interface Step {
  distance: number;
  duration: number;
  name: string;
  mode: string;
  safety_classification?: string;
  geometry: { type: 'LineString'; coordinates: LonLat[] };
  maneuver: { type: string; instruction: string; location: LonLat };
}
interface Route {
  distance: number;
  duration: number;
  elevation_gain: number;
  elevation_loss: number;
  geometry: { type: 'LineString'; coordinates: LonLat[] };
  steps: Step[];
}
interface Directions {
  route: Route | null;
  waypoints: { name: string; location: LonLat }[];
  sublabel: string | null;
  metadata: { nighttime?: boolean; supersafe?: boolean };
  disruptions?: { id: string; name: string; severity: string; status: string; notes: string }[];
}
interface Waypoint {
  at: LonLat | null;
  label: string;
  marker: Marker | null;
}
interface Session {
  access_token: string;
  refresh_token: string;
}

/** The two routes: SuperSafe solid blue, Direct dashed orange (the dash tells them apart without colour). */
const KINDS = [
  { key: 'safe', label: 'SuperSafe', colour: '#0072B2', dash: null, supersafe: true },
  { key: 'direct', label: 'Direct', colour: '#E69F00', dash: [1.6, 1.1], supersafe: false },
] as const;
type Kind = (typeof KINDS)[number]['key'];

const GREY_ROADS: ExpressionSpecification = ['case', ['==', ['get', 'bike'], 'none'], '#d2d2cc', '#b9bcc2'];
const baseLayers: LayerSpecification[] = [
  {
    id: 'roads',
    type: 'line',
    source: 'roads',
    'source-layer': 'roads',
    layout: { 'line-cap': 'round', 'line-join': 'round' },
    paint: { 'line-color': GREY_ROADS, 'line-width': classWidthExpr },
  },
];

const SESSION_KEY = 'qw-route-session';
let session: Session | null = JSON.parse(sessionStorage.getItem(SESSION_KEY) ?? 'null') as Session | null;
let map: MapLibreMap;
let city: City;
const waypoints: Waypoint[] = [];
const results: Partial<Record<Kind, Directions>> = {};
let chosen: Kind = 'safe';
let routeSeq = 0;
const status = (msg: string) => {
  byId('status').textContent = msg;
};

// ---- session -----------------------------------------------------------------------------------

function saveSession(s: Session | null): void {
  session = s;
  if (s) sessionStorage.setItem(SESSION_KEY, JSON.stringify(s));
  else sessionStorage.removeItem(SESSION_KEY);
  byId('signin').hidden = s !== null;
  byId('planner').hidden = s === null;
  const who = byId('who');
  who.replaceChildren();
  if (s) {
    const out = el('button', { type: 'button', class: 'linkish light' }, 'Sign out');
    out.addEventListener('click', () => {
      void fetch('/auth/v1/logout', {
        method: 'POST',
        headers: { authorization: `Bearer ${s.access_token}` },
      });
      saveSession(null);
    });
    who.append(out);
  }
}

async function signIn(signup: boolean): Promise<void> {
  const email = byId<HTMLInputElement>('email').value.trim();
  const password = byId<HTMLInputElement>('password').value;
  const name = byId<HTMLInputElement>('name').value.trim() || email.split('@')[0] || 'Rider';
  try {
    const body = await getJson<Session>(signup ? '/auth/v1/signup' : '/auth/v1/token?grant_type=password', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(signup ? { email, password, name } : { email, password }),
    });
    saveSession({ access_token: body.access_token, refresh_token: body.refresh_token });
    status('');
    document.getElementById('wp-0')?.focus();
  } catch (e) {
    status(`Sign-in failed: ${(e as Error).message}`);
  }
}

/** An authenticated request; refreshes an expired session once, shows the sign-in form when it ends. */
async function api(path: string, init: RequestInit = {}): Promise<Response> {
  const send = () =>
    fetch(path, {
      ...init,
      headers: {
        ...(init.body ? { 'content-type': 'application/json' } : {}),
        authorization: `Bearer ${session?.access_token ?? ''}`,
      },
    });
  let res = await send();
  if (res.status === 401 && session) {
    const r = await fetch('/auth/v1/token?grant_type=refresh_token', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refresh_token: session.refresh_token }),
    });
    if (r.ok) {
      const s = (await r.json()) as Session;
      saveSession({ access_token: s.access_token, refresh_token: s.refresh_token });
      res = await send();
    }
    if (res.status === 401) {
      saveSession(null);
      status('Your session ended: please sign in again.');
    }
  }
  return res;
}

async function apiJson<T>(path: string, body?: unknown): Promise<T> {
  const res = await api(path, body === undefined ? {} : { method: 'POST', body: JSON.stringify(body) });
  const json = (await res.json().catch(() => ({}))) as T & { error?: string };
  if (!res.ok) throw new Error(json.error ?? `${res.status} ${res.statusText}`);
  return json;
}

// ---- waypoints ---------------------------------------------------------------------------------

const letter = (i: number) => String.fromCharCode(65 + i);
const roleOf = (i: number) => (i === 0 ? 'Start' : i === waypoints.length - 1 ? 'Destination' : `Stop ${i}`);

function setWaypoint(i: number, at: LonLat, label: string): void {
  const w = waypoints[i];
  if (!w) return;
  w.at = at;
  w.label = label;
  renderWaypoints();
  scheduleRoute();
}

/** A map click fills the first empty waypoint, or adds a new destination. */
function clickAt(at: LonLat): void {
  const empty = waypoints.findIndex((w) => w.at === null);
  const label = `${at[1].toFixed(5)}, ${at[0].toFixed(5)}`;
  if (empty >= 0) {
    setWaypoint(empty, at, label);
    return;
  }
  if (waypoints.length >= 25) {
    status('At most 25 waypoints.');
    return;
  }
  waypoints.push({ at: null, label: '', marker: null });
  setWaypoint(waypoints.length - 1, at, label);
}

function renderWaypoints(): void {
  const ol = byId('waypoints');
  ol.replaceChildren();
  waypoints.forEach((w, i) => {
    const id = `wp-${i}`;
    const input = el('input', {
      id,
      type: 'text',
      role: 'combobox',
      'aria-autocomplete': 'list',
      'aria-expanded': 'false',
      'aria-controls': `${id}-list`,
      autocomplete: 'off',
      placeholder: w.at ? '' : 'Search a place or click the map',
    });
    input.value = w.label;
    const list = el('ul', { id: `${id}-list`, role: 'listbox', class: 'suggestions', hidden: '' });
    placeSearch(input, list, i);
    const centre = el(
      'button',
      { type: 'button', title: 'Put this waypoint at the map centre' },
      'Map centre',
    );
    centre.addEventListener('click', () => {
      const c = map.getCenter();
      setWaypoint(i, [c.lng, c.lat], `${c.lat.toFixed(5)}, ${c.lng.toFixed(5)}`);
    });
    const li = el(
      'li',
      {},
      el(
        'label',
        { for: id },
        el('span', { class: 'pin', 'aria-hidden': 'true' }, letter(i)),
        ` ${roleOf(i)}`,
      ),
      el('div', { class: 'row' }, input, centre),
      list,
    );
    if (waypoints.length > 2) {
      const remove = el('button', { type: 'button', 'aria-label': `Remove ${roleOf(i)}` }, '✕');
      remove.addEventListener('click', () => {
        waypoints[i]?.marker?.remove();
        waypoints.splice(i, 1);
        renderWaypoints();
        scheduleRoute();
      });
      li.querySelector('.row')?.append(remove);
    }
    ol.append(li);
    // The marker: a lettered pin, draggable.
    w.marker?.remove();
    w.marker = null;
    if (w.at) {
      const pin = el('div', { class: 'pin marker', 'aria-hidden': 'true' }, letter(i));
      const marker = new Marker({ element: pin, draggable: true, anchor: 'bottom' })
        .setLngLat(w.at)
        .addTo(map);
      marker.on('dragend', () => {
        const p = marker.getLngLat();
        setWaypoint(i, [p.lng, p.lat], `${p.lat.toFixed(5)}, ${p.lng.toFixed(5)}`);
      });
      w.marker = marker;
    }
  });
}

interface Prediction {
  placeId: string;
  text: { text: string };
  structuredFormat?: { mainText: { text: string }; secondaryText?: { text: string } };
}

/** Place search on one waypoint's input: a keyboard-driven combobox over the server's autocomplete. */
function placeSearch(input: HTMLInputElement, list: HTMLElement, i: number): void {
  let token = crypto.randomUUID();
  let timer = 0;
  let items: Prediction[] = [];
  let active = -1;
  const close = () => {
    list.hidden = true;
    input.setAttribute('aria-expanded', 'false');
    input.removeAttribute('aria-activedescendant');
    active = -1;
  };
  const highlight = (n: number) => {
    active = n;
    list.querySelectorAll('li').forEach((li, k) => {
      li.setAttribute('aria-selected', String(k === n));
    });
    if (n >= 0) input.setAttribute('aria-activedescendant', `${list.id}-${n}`);
  };
  const pick = async (p: Prediction) => {
    close();
    try {
      const d = await apiJson<{ displayName: string; location: { latitude: number; longitude: number } }>(
        `/functions/v1/place-search/details?placeId=${encodeURIComponent(p.placeId)}&sessionToken=${encodeURIComponent(token)}`,
      );
      token = crypto.randomUUID();
      const at: LonLat = [d.location.longitude, d.location.latitude];
      setWaypoint(i, at, p.structuredFormat?.mainText.text ?? d.displayName);
      map.easeTo({ center: at, zoom: Math.max(map.getZoom(), 15) });
    } catch (e) {
      status(`Place search failed: ${(e as Error).message}`);
    }
  };
  const search = async (q: string) => {
    const c = map.getCenter();
    try {
      const r = await apiJson<{ unrestricted: Prediction[]; restricted: Prediction[] | null }>(
        '/functions/v1/place-search/autocomplete',
        { input: q, sessionToken: token, origin: { latitude: c.lat, longitude: c.lng }, bbox: city.bbox },
      );
      if (input.value.trim() !== q) return;
      items = r.restricted?.length ? r.restricted : r.unrestricted;
      list.replaceChildren(
        ...items.map((p, k) => {
          const li = el(
            'li',
            { id: `${list.id}-${k}`, role: 'option', 'aria-selected': 'false' },
            el('strong', {}, p.structuredFormat?.mainText.text ?? p.text.text),
            ` ${p.structuredFormat?.secondaryText?.text ?? ''}`,
          );
          li.addEventListener('mousedown', (ev) => {
            ev.preventDefault();
            void pick(p);
          });
          return li;
        }),
      );
      if (items.length === 0) list.append(el('li', { class: 'hint' }, 'No place found'));
      list.hidden = false;
      input.setAttribute('aria-expanded', 'true');
      active = -1;
    } catch (e) {
      status(`Place search failed: ${(e as Error).message}`);
    }
  };
  input.addEventListener('input', () => {
    window.clearTimeout(timer);
    const q = input.value.trim();
    if (q.length < 2) return close();
    timer = window.setTimeout(() => void search(q), 250);
  });
  input.addEventListener('keydown', (ev) => {
    if (list.hidden || items.length === 0) return;
    if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
      ev.preventDefault();
      const n = items.length;
      highlight(ev.key === 'ArrowDown' ? (active + 1) % n : (active - 1 + n) % n);
    } else if (ev.key === 'Enter' && active >= 0) {
      ev.preventDefault();
      const p = items[active];
      if (p) void pick(p);
    } else if (ev.key === 'Escape') {
      close();
    }
  });
  input.addEventListener('blur', () => window.setTimeout(close, 150));
}

// ---- routing -----------------------------------------------------------------------------------

let routeTimer = 0;
function scheduleRoute(): void {
  window.clearTimeout(routeTimer);
  routeTimer = window.setTimeout(() => void planRoutes(), 150);
}

function requestBody(supersafe: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {
    coordinates: waypoints.map((w) => w.at),
    profile: 'cycling',
    supersafe,
  };
  const departure = byId<HTMLInputElement>('departure').value;
  if (departure) body.departure_time = departure;
  const night = byId<HTMLSelectElement>('night').value;
  if (night) body.nighttime = night === 'night';
  return body;
}

async function planRoutes(): Promise<void> {
  const ready = waypoints.filter((w) => w.at).length;
  if (ready < 2 || ready !== waypoints.length) {
    clearRoutes();
    return;
  }
  const seq = ++routeSeq;
  status('Planning…');
  try {
    const [safe, direct] = await Promise.all(
      KINDS.map((k) => apiJson<Directions>('/directions/v2/', requestBody(k.supersafe))),
    );
    if (seq !== routeSeq || !safe || !direct) return;
    results.safe = safe;
    results.direct = direct;
    status(safe.route || direct.route ? '' : 'No route between these points.');
    drawRoutes();
    renderResults();
    void explain(seq, safe, direct);
    void multiModal(seq);
  } catch (e) {
    if (seq === routeSeq) {
      clearRoutes();
      status(`Routing failed: ${(e as Error).message}`);
    }
  }
}

function clearRoutes(): void {
  routeSeq++; // answers still in flight are for the old waypoints
  delete results.safe;
  delete results.direct;
  for (const k of KINDS) setLine(`route-${k.key}`, null);
  setLine('step', null);
  options = [];
  showOption(-1);
  setLine('snaps', null);
  byId('results').hidden = true;
  byId('gpx-row').hidden = true;
  byId('explanation').hidden = true;
  byId('multimodal').hidden = true;
}

function setLine(source: string, coordinates: LonLat[] | LonLat[][] | null): void {
  const src = map.getSource(source) as GeoJSONSource | undefined;
  if (!src) return;
  const lines =
    coordinates === null || coordinates.length === 0
      ? []
      : Array.isArray(coordinates[0]?.[0])
        ? coordinates
        : [coordinates];
  src.setData({
    type: 'FeatureCollection',
    features: (lines as LonLat[][]).map((c) => ({
      type: 'Feature',
      geometry: { type: 'LineString', coordinates: c },
      properties: {},
    })),
  });
}

function drawRoutes(): void {
  const bounds = new LngLatBounds();
  for (const k of KINDS) {
    const route = results[k.key]?.route;
    setLine(`route-${k.key}`, route ? route.geometry.coordinates : null);
    for (const c of route?.geometry.coordinates ?? []) bounds.extend(c);
    map.setPaintProperty(`route-${k.key}`, 'line-width', k.key === chosen ? 7 : 4.5);
  }
  for (const w of waypoints) if (w.at) bounds.extend(w.at);
  // Where each waypoint joined the network: a dotted line from the pin to its snapped position.
  const snapped = results.safe?.waypoints ?? [];
  setLine(
    'snaps',
    waypoints.flatMap((w, i) => {
      const s = snapped[i]?.location;
      return w.at && s ? [[w.at, s]] : [];
    }),
  );
  // The chosen route on top.
  map.moveLayer(`route-${chosen}`, 'option-ride');
  setLine('step', null);
  if (!bounds.isEmpty()) map.fitBounds(bounds, { padding: 50, maxZoom: 17, duration: 300 });
}

const sameRoads = (a: Route, b: Route) =>
  a.geometry.coordinates.length === b.geometry.coordinates.length &&
  a.geometry.coordinates.every(
    (c, i) => c[0] === b.geometry.coordinates[i]?.[0] && c[1] === b.geometry.coordinates[i]?.[1],
  );

/** Metres per safety class, from the steps (each step counts for the class covering most of it). */
function metresPerClass(route: Route): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of route.steps) {
    if (!s.safety_classification || s.distance <= 0) continue;
    out.set(s.safety_classification, (out.get(s.safety_classification) ?? 0) + s.distance);
  }
  return out;
}

/**
 * A route's two cards: its summary (distance, time, climb, classes, disruptions) and its turn-by-turn
 * list, so that the explanation sentence sits between the two summaries and the two lists.
 */
function routeCards(kind: (typeof KINDS)[number], d: Directions): [HTMLElement, HTMLElement | null] {
  const card = el('article', { class: `card route ${kind.key}`, 'aria-labelledby': `${kind.key}-title` });
  const radio = el('input', { type: 'radio', name: 'chosen', id: `choose-${kind.key}`, value: kind.key });
  radio.checked = chosen === kind.key;
  radio.addEventListener('change', () => {
    chosen = kind.key;
    drawRoutes();
  });
  card.append(
    el(
      'h3',
      { id: `${kind.key}-title` },
      el('span', {
        class: `swatch route-swatch ${kind.dash ? 'dashed' : ''}`,
        style: `background-color:${kind.colour}`,
        'aria-hidden': 'true',
      }),
      ` ${kind.label}`,
    ),
    el('div', { class: 'row' }, radio, el('label', { for: `choose-${kind.key}` }, 'Use this route')),
  );
  const route = d.route;
  if (!route) {
    card.append(el('p', {}, 'No route found.'));
    return [card, null];
  }
  if (d.sublabel) card.append(el('p', { class: 'hint' }, d.sublabel));
  const other = results[kind.key === 'safe' ? 'direct' : 'safe']?.route;
  if (kind.key === 'direct' && other && sameRoads(route, other))
    card.append(
      el(
        'p',
        { class: 'hint same' },
        'The same roads as SuperSafe: the most direct route is also the quietest.',
      ),
    );
  const dl = el('dl', { class: 'summary' });
  for (const [k, v] of [
    ['Distance', km(route.distance)],
    ['Time', minutes(route.duration)],
    ['Climb', `${Math.round(route.elevation_gain)} m`],
  ] as const)
    dl.append(el('dt', {}, k), el('dd', { class: k.toLowerCase() }, v));
  card.append(dl);
  // Metres per class: a bar and a list.
  const per = metresPerClass(route);
  const total = [...per.values()].reduce((a, b) => a + b, 0) || 1;
  const bar = el('div', { class: 'classbar', 'aria-hidden': 'true' });
  const classes = el('ul', { class: 'legend classes' });
  for (const c of CLASSES) {
    const m = per.get(c.id);
    if (!m) continue;
    bar.append(el('span', { style: `background-color:${c.colour};width:${(100 * m) / total}%` }));
    classes.append(el('li', {}, swatch(c.colour), `${c.label}: ${km(m)}`));
  }
  card.append(bar, classes);
  if (d.disruptions?.length) {
    const ul = el('ul', { class: 'disruptions' });
    for (const x of d.disruptions)
      ul.append(el('li', {}, `${x.severity === 'closed' ? 'Closed' : 'Avoid'} (${x.status}): ${x.name}`));
    card.append(el('h4', {}, 'Disruptions near this route'), ul);
  }
  // Turn by turn.
  const steps = el('ol', { class: 'steps', 'aria-label': `${kind.label} turn-by-turn` });
  for (const s of route.steps) {
    const b = el(
      'button',
      { type: 'button', class: 'step' },
      el('span', { class: 'instr' }, s.maneuver.instruction),
      s.distance > 0 ? el('span', { class: 'dist' }, km(s.distance)) : '',
    );
    if (s.safety_classification)
      b.prepend(
        el('span', {
          class: 'dot',
          style: `background-color:${classColour(s.safety_classification)}`,
          title: classLabel(s.safety_classification),
        }),
      );
    b.addEventListener('click', () => zoomToStep(s));
    steps.append(el('li', {}, b));
  }
  const list = el(
    'article',
    { class: `card route ${kind.key} turns`, 'aria-label': `${kind.label}: turn by turn` },
    el(
      'details',
      { open: '' },
      el('summary', {}, `${kind.label}: turn by turn (${route.steps.length} steps)`),
      steps,
    ),
  );
  return [card, list];
}

function zoomToStep(s: Step): void {
  const coords = s.geometry.coordinates;
  setLine('step', coords);
  const b = new LngLatBounds();
  for (const c of coords) b.extend(c);
  b.extend(s.maneuver.location);
  map.fitBounds(b, { padding: 80, maxZoom: 18, duration: 400 });
  status(s.maneuver.instruction);
}

function renderResults(): void {
  const section = byId('results');
  const explanation = byId('explanation');
  const cards = KINDS.flatMap((k) => {
    const d = results[k.key];
    return d ? [routeCards(k, d)] : [];
  });
  // The two summaries, the explanation sentence under them (filled when it answers), the two lists.
  section.replaceChildren(
    ...cards.map(([head]) => head),
    explanation,
    ...cards.flatMap(([, list]) => (list ? [list] : [])),
  );
  section.hidden = false;
  byId('gpx-row').hidden = !(results.safe?.route || results.direct?.route);
}

// ---- the explanation sentence ------------------------------------------------------------------

interface Explanation {
  summary: string | null;
  identical: boolean;
  no_route?: boolean;
}

/** The server's sentences carry no trailing period: the page adds one. */
const sentence = (s: string) => (/[.!?]$/.test(s) ? s : `${s}.`);

/**
 * `POST /explain-supersafe/` for a trip of two points (it takes an origin and a destination only): one
 * sentence on how SuperSafe differs from Direct, shown under the two summaries. Identical routes say
 * so; routes that differ with nothing true to say of it point at the classes above; without a route
 * (or when the endpoint cannot answer: 429, 503) the box stays hidden and the routes speak for themselves.
 */
async function explain(seq: number, safe: Directions, direct: Directions): Promise<void> {
  const box = byId('explanation');
  box.hidden = true;
  box.replaceChildren();
  const first = waypoints[0]?.at;
  const last = waypoints[waypoints.length - 1]?.at;
  if (waypoints.length !== 2 || !first || !last || !safe.route || !direct.route) return;
  const body: Record<string, unknown> = {
    origin: first,
    destination: last,
    nighttime: safe.metadata.nighttime ?? false,
  };
  const departure = byId<HTMLInputElement>('departure').value;
  if (departure) body.departure_time = departure;
  let answer: Explanation;
  try {
    answer = await apiJson<Explanation>('/explain-supersafe/', body);
  } catch {
    return;
  }
  if (seq !== routeSeq || answer.no_route) return;
  const say = (label: string, text: string) => {
    box.replaceChildren(el('strong', {}, label), ` ${text}`);
    box.classList.toggle('same', answer.identical);
    box.hidden = false;
  };
  if (answer.identical)
    say('One route for both:', sentence(answer.summary ?? 'SuperSafe is the direct route'));
  else if (answer.summary) say('Why SuperSafe:', sentence(answer.summary));
  else say('SuperSafe and Direct:', 'they take different roads here; compare their safety classes above.');
}

// ---- bike-share options (multi-modal) -----------------------------------------------------------

interface Leg {
  mode: 'walking' | 'cycling';
  start_label?: string;
  end_label?: string;
  distance: number;
  duration: number;
  geometry: { coordinates: LonLat[] };
}
interface Pricing {
  currency: string;
  unlock_fee: number;
  per_min_rate: number | null;
  per_min_interval: number | null;
  per_km_rate: number | null;
  per_km_interval: number | null;
  description: string;
  estimated_cost: number;
}
interface Option {
  name: string;
  label: string | null;
  sublabel: string | null;
  bike_type: 'Personal' | 'Docked' | 'Dockless';
  is_electric?: boolean;
  legs: Leg[];
  disruptions?: Directions['disruptions'];
  rental?: {
    pricing: Pricing | null;
    app_links: { android: string | null; ios: string | null; logo: string | null };
  };
}

const OPTION_COLOUR = '#CC79A7';
let options: Option[] = [];
let shown = -1;

const money = (amount: number, currency: string) => {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).format(amount);
  } catch {
    return `${amount.toFixed(2)} ${currency}`;
  }
};

/** The per-minute or per-kilometre part of a plan, in words ("$0.26 per min"). */
function rateOf(p: Pricing): string | null {
  const per = (rate: number, interval: number | null, unit: string) =>
    `${money(rate, p.currency)} per ${interval && interval !== 1 ? `${interval} ${unit}` : unit}`;
  if (p.per_min_rate) return per(p.per_min_rate, p.per_min_interval, 'min');
  if (p.per_km_rate) return per(p.per_km_rate, p.per_km_interval, 'km');
  return null;
}

/** Draws one option's legs (walking dotted, riding solid) and dims the two routes; null clears. */
function showOption(i: number): void {
  shown = i;
  const o = options[i];
  if (!map.getLayer('option-ride')) return; // the map is still loading
  const src = map.getSource('option') as GeoJSONSource | undefined;
  src?.setData({
    type: 'FeatureCollection',
    features: [
      ...(o?.legs ?? []).map((l) => ({
        type: 'Feature' as const,
        geometry: { type: 'LineString' as const, coordinates: l.geometry.coordinates },
        properties: { mode: l.mode },
      })),
      // Where a leg hands over to the next: the station or the bike.
      ...(o?.legs.slice(0, -1) ?? []).flatMap((l) => {
        const end = l.geometry.coordinates[l.geometry.coordinates.length - 1];
        return end
          ? [
              {
                type: 'Feature' as const,
                geometry: { type: 'Point' as const, coordinates: end },
                properties: {},
              },
            ]
          : [];
      }),
    ],
  });
  for (const k of KINDS) map.setPaintProperty(`route-${k.key}`, 'line-opacity', o ? 0.35 : 1);
  document.querySelectorAll<HTMLButtonElement>('#options button.show').forEach((b, k) => {
    b.setAttribute('aria-pressed', String(k === i));
    b.textContent = k === i ? 'Hide on the map' : 'Show on the map';
  });
  if (!o) return;
  const bounds = new LngLatBounds();
  for (const l of o.legs) for (const c of l.geometry.coordinates) bounds.extend(c);
  if (!bounds.isEmpty()) map.fitBounds(bounds, { padding: 60, maxZoom: 17, duration: 300 });
  status(`Showing ${optionTitle(o)} on the map.`);
}

const optionTitle = (o: Option) =>
  `${o.name} · ${o.bike_type === 'Dockless' ? 'dockless' : 'docked'} ${o.is_electric ? 'e-bike' : 'bike'}`;

function optionCard(o: Option, i: number): HTMLElement {
  const time = o.legs.reduce((a, l) => a + l.duration, 0);
  const dist = o.legs.reduce((a, l) => a + l.distance, 0);
  const ride = o.legs.filter((l) => l.mode === 'cycling').reduce((a, l) => a + l.distance, 0);
  const li = el(
    'li',
    { class: `card option ${o.bike_type.toLowerCase()}${o.is_electric ? ' electric' : ''}` },
    el('h3', {}, optionTitle(o)),
  );
  if (o.label || o.sublabel)
    li.append(el('p', { class: 'hint' }, [o.label, o.sublabel].filter(Boolean).join(' · ')));
  li.append(el('p', { class: 'total' }, `${minutes(time)} · ${km(dist)}, ${km(ride)} of it ridden`));
  // The legs, in travel order, with their labels (the station's live counts, "End").
  const legs = el('ol', { class: 'legs', 'aria-label': `${optionTitle(o)}: legs` });
  for (const l of o.legs) {
    const walk = l.mode === 'walking';
    legs.append(
      el(
        'li',
        { class: `leg ${l.mode}` },
        el('span', { class: `swatch leg-swatch ${walk ? 'dotted' : ''}`, 'aria-hidden': 'true' }),
        el('strong', {}, walk ? 'Walk' : 'Ride'),
        ` ${km(l.distance)}, ${minutes(l.duration)}`,
        l.start_label ? ` from ${l.start_label}` : '',
        l.end_label ? ` → ${l.end_label}` : '',
      ),
    );
  }
  li.append(legs);
  // Pricing: the estimate for this ride under the operator's plan, else say it is not published.
  const p = o.rental?.pricing;
  if (p) {
    // The plan's own description when it has one (it usually says the fee and rate), else them.
    const rate = rateOf(p);
    const terms =
      p.description || `${money(p.unlock_fee, p.currency)} to unlock${rate ? `, then ${rate}` : ''}.`;
    li.append(
      el(
        'p',
        { class: 'price' },
        el('strong', {}, `About ${money(p.estimated_cost, p.currency)}`),
        ` for this ride. ${terms}`,
      ),
    );
  } else if (o.rental) {
    li.append(el('p', { class: 'price hint' }, 'Price: the operator publishes no pricing; see its app.'));
  }
  // App links: plain links (no logo: the page loads nothing from another host).
  const links = o.rental?.app_links;
  if (links?.android || links?.ios) {
    const p2 = el('p', { class: 'apps' }, 'Rent with the app: ');
    const a = (href: string, text: string) => el('a', { href, rel: 'noreferrer', target: '_blank' }, text);
    if (links.android && links.android === links.ios) p2.append(a(links.android, 'open the app'));
    else {
      if (links.android) p2.append(a(links.android, 'Android'));
      if (links.android && links.ios) p2.append(' · ');
      if (links.ios) p2.append(a(links.ios, 'iOS'));
    }
    li.append(p2);
  }
  if (o.disruptions?.length) {
    const ul = el('ul', { class: 'disruptions' });
    for (const x of o.disruptions)
      ul.append(el('li', {}, `${x.severity === 'closed' ? 'Closed' : 'Avoid'} (${x.status}): ${x.name}`));
    li.append(el('h4', {}, 'Disruptions near the ride'), ul);
  }
  const b = el('button', { type: 'button', class: 'show', 'aria-pressed': 'false' }, 'Show on the map');
  b.addEventListener('click', () => showOption(shown === i ? -1 : i));
  li.append(b);
  return li;
}

/**
 * `POST /multi-modal/v2/` for a trip of two points, asked only in a city with bike-share configured
 * (`bike_share` of `GET /safety-map/`). The personal-bike options repeat SuperSafe and Direct, so only
 * the bike-share ones are listed; none viable, or an error, is said in the section.
 */
async function multiModal(seq: number): Promise<void> {
  const section = byId('multimodal');
  const list = byId('options');
  const note = byId('options-note');
  section.hidden = true;
  list.replaceChildren();
  note.textContent = '';
  options = [];
  showOption(-1);
  const systems = city.bike_share ?? [];
  const first = waypoints[0]?.at;
  const last = waypoints[waypoints.length - 1]?.at;
  if (systems.length === 0 || waypoints.length !== 2 || !first || !last) return;
  const body: Record<string, unknown> = { origin: first, destination: last };
  const departure = byId<HTMLInputElement>('departure').value;
  if (departure) body.departure_time = departure;
  const night = byId<HTMLSelectElement>('night').value;
  if (night) body.nighttime = night === 'night';
  let all: Option[];
  try {
    all = (await apiJson<{ options: Option[] }>('/multi-modal/v2/', body)).options;
  } catch (e) {
    if (seq !== routeSeq) return;
    note.textContent = `Bike-share options are unavailable right now: ${(e as Error).message}.`;
    section.hidden = false;
    return;
  }
  if (seq !== routeSeq) return;
  options = all.filter((o) => o.bike_type !== 'Personal');
  if (options.length === 0)
    note.textContent = `No ${systems.join(' or ')} option for this trip: no bike or free dock close enough (1.5 km), or far slower than riding your own bike.`;
  list.replaceChildren(...options.map(optionCard));
  section.hidden = false;
}

// ---- GPX ---------------------------------------------------------------------------------------

const xml = (s: string) =>
  s.replace(
    /[<>&"']/g,
    (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c] ?? c,
  );

/** GPX 1.1 of the chosen route: the waypoints and one track. */
function gpxOf(name: string, route: Route, stops: Waypoint[]): string {
  const pt = ([lon, lat]: LonLat) => `lat="${lat.toFixed(6)}" lon="${lon.toFixed(6)}"`;
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<gpx version="1.1" creator="Quietway" xmlns="http://www.topografix.com/GPX/1/1">',
    `  <metadata><name>${xml(name)}</name><copyright author="OpenStreetMap contributors"><license>https://opendatacommons.org/licenses/odbl/</license></copyright></metadata>`,
    ...stops.flatMap((w, i) =>
      w.at ? [`  <wpt ${pt(w.at)}><name>${xml(`${letter(i)}: ${w.label}`)}</name></wpt>`] : [],
    ),
    `  <trk><name>${xml(name)}</name><trkseg>`,
    ...route.geometry.coordinates.map((c) => `    <trkpt ${pt(c)}/>`),
    '  </trkseg></trk>',
    '</gpx>',
    '',
  ].join('\n');
}

function downloadGpx(): void {
  const kind = KINDS.find((k) => k.key === chosen) ?? KINDS[0];
  const route = results[kind.key]?.route;
  if (!route) {
    status(`No ${kind.label} route to download.`);
    return;
  }
  const blob = new Blob([gpxOf(`Quietway ${kind.label}`, route, waypoints)], { type: 'application/gpx+xml' });
  const a = el('a', { href: URL.createObjectURL(blob), download: `quietway-${kind.key}.gpx` });
  document.body.append(a);
  a.click();
  a.remove();
  window.setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

// ---- start -------------------------------------------------------------------------------------

async function main(): Promise<void> {
  try {
    const loaded = await loadCities();
    city = loaded.city;
    const select = byId<HTMLSelectElement>('city');
    for (const c of loaded.cities)
      select.append(el('option', { value: c.id, ...(c.id === city.id ? { selected: '' } : {}) }, c.name));
    select.addEventListener('change', () => {
      location.href = `/map/route?city=${encodeURIComponent(select.value)}`;
    });
    map = makeMap('map', city, roadsStyle(city, baseLayers, '#f4f3ee'));
    waypoints.push({ at: null, label: '', marker: null }, { at: null, label: '', marker: null });
    map.on('load', () => {
      for (const s of ['snaps', 'route-safe', 'route-direct', 'step', 'option'])
        map.addSource(s, { type: 'geojson', data: { type: 'FeatureCollection', features: [] } });
      map.addLayer({
        id: 'snaps',
        type: 'line',
        source: 'snaps',
        paint: { 'line-color': '#1d2430', 'line-width': 1.5, 'line-dasharray': [1, 2] },
      });
      for (const k of KINDS)
        map.addLayer({
          id: `route-${k.key}`,
          type: 'line',
          source: `route-${k.key}`,
          layout: { 'line-join': 'round', ...(k.dash ? {} : { 'line-cap': 'round' }) },
          paint: {
            'line-color': k.colour,
            'line-width': 5,
            ...(k.dash ? { 'line-dasharray': [...k.dash] } : {}),
          },
        });
      // A bike-share option's legs: riding solid, walking dotted (the dash tells them apart).
      map.addLayer({
        id: 'option-ride',
        type: 'line',
        source: 'option',
        filter: ['==', ['get', 'mode'], 'cycling'],
        layout: { 'line-cap': 'round', 'line-join': 'round' },
        paint: { 'line-color': OPTION_COLOUR, 'line-width': 5 },
      });
      map.addLayer({
        id: 'option-walk',
        type: 'line',
        source: 'option',
        filter: ['==', ['get', 'mode'], 'walking'],
        layout: { 'line-cap': 'round', 'line-join': 'round' },
        paint: { 'line-color': OPTION_COLOUR, 'line-width': 4, 'line-dasharray': [0.1, 1.8] },
      });
      map.addLayer({
        id: 'option-stops',
        type: 'circle',
        source: 'option',
        filter: ['==', ['geometry-type'], 'Point'],
        paint: {
          'circle-radius': 6,
          'circle-color': '#ffffff',
          'circle-stroke-color': OPTION_COLOUR,
          'circle-stroke-width': 3,
        },
      });
      map.addLayer({
        id: 'step',
        type: 'line',
        source: 'step',
        layout: { 'line-cap': 'round' },
        paint: { 'line-color': '#1d2430', 'line-width': 10, 'line-opacity': 0.45 },
      });
      renderWaypoints();
      map.on('click', (e) => {
        // A click on a waypoint's pin (or the end of dragging one) is not a new waypoint.
        if ((e.originalEvent.target as Element | null)?.closest('.maplibregl-marker')) return;
        if (!session) return status('Sign in to plan routes.');
        clickAt([e.lngLat.lng, e.lngLat.lat]);
      });
    });
    saveSession(session);
    byId('signin').addEventListener('submit', (e) => {
      e.preventDefault();
      void signIn(false);
    });
    byId('signup-button').addEventListener('click', () => void signIn(true));
    byId('add-stop').addEventListener('click', () => {
      if (waypoints.length >= 25) return status('At most 25 waypoints.');
      // A new stop goes before the destination.
      waypoints.splice(waypoints.length - 1, 0, { at: null, label: '', marker: null });
      renderWaypoints();
      byId<HTMLInputElement>(`wp-${waypoints.length - 2}`).focus();
    });
    byId('reverse').addEventListener('click', () => {
      waypoints.reverse();
      renderWaypoints();
      scheduleRoute();
    });
    byId('clear').addEventListener('click', () => {
      for (const w of waypoints) w.marker?.remove();
      waypoints.splice(
        0,
        waypoints.length,
        { at: null, label: '', marker: null },
        { at: null, label: '', marker: null },
      );
      renderWaypoints();
      clearRoutes();
    });
    byId('departure').addEventListener('change', scheduleRoute);
    byId('night').addEventListener('change', scheduleRoute);
    byId('gpx').addEventListener('click', downloadGpx);
    // The base roads in grey, or in the safety map's class colours.
    byId<HTMLInputElement>('classes').addEventListener('change', (e) => {
      const on = (e.target as HTMLInputElement).checked;
      map.setPaintProperty('roads', 'line-color', on ? classColourExpr : GREY_ROADS);
      map.setPaintProperty('roads', 'line-opacity', on ? 0.55 : 1);
    });
    (window as unknown as { quietwayMap: MapLibreMap }).quietwayMap = map;
  } catch (e) {
    status((e as Error).message);
  }
}

void main();
