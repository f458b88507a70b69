// What both map pages share: the server's cities, the base map drawn from the graph's own roads
// (the safety-map vector tiles), the colour-blind-safe palette (Okabe–Ito) and small DOM helpers.
// Everything is fetched from the server itself: no tile, font or script host.
import type {
  ExpressionSpecification,
  LayerSpecification,
  StyleSpecification,
} from '@maplibre/maplibre-gl-style-spec';
import {
  AttributionControl,
  Map as MapLibreMap,
  NavigationControl,
  ScaleControl,
  setWorkerUrl,
} from 'maplibre-gl';
import 'maplibre-gl/dist/maplibre-gl.css';
import './pages.css';

export interface City {
  id: string;
  name: string;
  bbox: [number, number, number, number];
  /** The bike-share systems configured for the city (names); empty without any. */
  bike_share?: string[];
}

export const ATTRIBUTION =
  '© <a href="https://www.openstreetmap.org/copyright" rel="noreferrer">OpenStreetMap</a> contributors (ODbL)';

/**
 * The five API safety classes (docs/safety-rules.md), safest first, with Okabe–Ito colours and line
 * widths (a second cue besides colour).
 */
export const CLASSES = [
  {
    id: 'cycleway',
    label: 'Cycleway',
    legend: 'Cycleway (quiet, on a signed route)',
    colour: '#0072B2',
    width: 3,
  },
  { id: 'quiet', label: 'Quiet', legend: 'Quiet street, lane or path', colour: '#56B4E9', width: 2.5 },
  {
    id: 'shared',
    label: 'Shared or walked',
    legend: 'Shared with walkers, or walk your bike',
    colour: '#009E73',
    width: 1.6,
  },
  { id: 'moderate', label: 'Moderate', legend: 'Moderate traffic', colour: '#E69F00', width: 3 },
  { id: 'busy', label: 'Busy', legend: 'Busy or very busy', colour: '#D55E00', width: 4 },
] as const;
export const classLabel = (id: string) => CLASSES.find((c) => c.id === id)?.label ?? id;
export const classColour = (id: string) => CLASSES.find((c) => c.id === id)?.colour ?? '#777777';

const rank = (prop: string): ExpressionSpecification =>
  ['match', ['get', prop], ...CLASSES.flatMap((c, i) => [c.id, i]), 0] as unknown as ExpressionSpecification;
/**
 * The class a stretch is drawn in: the worse of its two directions, except that `shared` on one side
 * only is the pushed direction of a one-way street (or a pavement), so the ridden side's class counts.
 */
export const worseClass: ExpressionSpecification = [
  'case',
  ['==', ['get', 'class'], 'shared'],
  ['get', 'class_backward'],
  ['==', ['get', 'class_backward'], 'shared'],
  ['get', 'class'],
  ['>', rank('class_backward'), rank('class')],
  ['get', 'class_backward'],
  ['get', 'class'],
];
const byClass = (pick: (c: (typeof CLASSES)[number]) => string | number, other: string | number) =>
  [
    'match',
    worseClass,
    ...CLASSES.flatMap((c) => [c.id, pick(c)]),
    other,
  ] as unknown as ExpressionSpecification;
export const classColourExpr = byClass((c) => c.colour, '#777777');
/** Widths grow with zoom: `scale` × the class width at zoom 15, a third of it at 12, three times at 18. */
export const classWidth = (scale = 1): ExpressionSpecification => [
  'interpolate',
  ['exponential', 1.6],
  ['zoom'],
  12,
  byClass((c) => c.width * scale * 0.35, scale * 0.35),
  15,
  byClass((c) => c.width * scale, scale),
  18,
  byClass((c) => c.width * scale * 3, scale * 3),
];
export const classWidthExpr = classWidth();

export async function getJson<T>(url: string, init?: RequestInit): Promise<T> {
  const res = await fetch(url, init);
  const body = (await res.json().catch(() => ({}))) as T & { error?: string };
  if (!res.ok) throw new Error(body.error ?? `${res.status} ${res.statusText}`);
  return body;
}

/** The cities the server routes, and the one chosen by `?city=` (else the first). */
export async function loadCities(): Promise<{ cities: City[]; city: City }> {
  const { cities } = await getJson<{ cities: City[] }>('/safety-map/');
  const wanted = new URLSearchParams(location.search).get('city');
  const city = cities.find((c) => c.id === wanted) ?? cities[0];
  if (!city) throw new Error('No city graph is loaded on this server.');
  return { cities, city };
}

/** The roads source: the city's safety-map tiles (zoom 12–18; drawn larger beyond). */
export function roadsStyle(city: City, layers: LayerSpecification[], background: string): StyleSpecification {
  return {
    version: 8,
    sources: {
      roads: {
        type: 'vector',
        tiles: [`${location.origin}/safety-map/${encodeURIComponent(city.id)}/tiles/{z}/{x}/{y}.pbf`],
        minzoom: 12,
        maxzoom: 18,
        bounds: city.bbox,
        attribution: ATTRIBUTION,
      },
    },
    layers: [{ id: 'background', type: 'background', paint: { 'background-color': background } }, ...layers],
  };
}

/** A map over `city` in `container`, starting at the URL's `#zoom/lat/lon` or the city's middle. */
export function makeMap(container: string, city: City, style: StyleSpecification): MapLibreMap {
  setWorkerUrl(new URL('maplibre-gl-worker.mjs', import.meta.url).href);
  const [w, s, e, n] = city.bbox;
  const map = new MapLibreMap({
    container,
    style,
    center: [(w + e) / 2, (s + n) / 2],
    zoom: 14,
    minZoom: 12,
    maxZoom: 19,
    maxBounds: [
      [w - 0.05, s - 0.05],
      [e + 0.05, n + 0.05],
    ],
    hash: true,
    attributionControl: false,
    dragRotate: false,
    pitchWithRotate: false,
  });
  map.touchZoomRotate.disableRotation();
  map.addControl(new AttributionControl({ compact: false }), 'bottom-right');
  map.addControl(new NavigationControl({ showCompass: false }), 'top-right');
  map.addControl(new ScaleControl({ unit: 'metric' }), 'bottom-left');
  map.getCanvas().setAttribute('aria-label', `Map of ${city.name}. Arrow keys pan, plus and minus zoom.`);
  return map;
}

/** `document.createElement` with text and attributes. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const c of children) e.append(c);
  return e;
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const e = document.getElementById(id);
  if (!e) throw new Error(`#${id} missing`);
  return e as T;
}

/** A legend swatch: a short line in a class colour. */
export const swatch = (colour: string, extra = '') =>
  el('span', { class: `swatch ${extra}`, style: `background-color:${colour}`, 'aria-hidden': 'true' });

export const km = (m: number) => (m >= 1000 ? `${(m / 1000).toFixed(1)} km` : `${Math.round(m)} m`);
export const minutes = (s: number) =>
  s >= 3600
    ? `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`
    : `${Math.max(1, Math.round(s / 60))} min`;
