// /map/: the public safety map. Every road of the graph coloured by its safety class (the worse of its
// two directions), signed cycle routes outlined, roads closed to bicycles dashed grey, lit roads on the
// night toggle, and the changes, avoidance windows and disruptions in force, with details on click.
import type { LayerSpecification } from '@maplibre/maplibre-gl-style-spec';
import type { GeoJSONSource, MapGeoJSONFeature, Map as MapLibreMap } from 'maplibre-gl';
import { Popup } from 'maplibre-gl';
import {
  byId,
  type City,
  CLASSES,
  classColourExpr,
  classLabel,
  classWidth,
  classWidthExpr,
  el,
  getJson,
  loadCities,
  makeMap,
  roadsStyle,
  swatch,
} from './common.js';

interface Disruption {
  id: string;
  source: string;
  name: string;
  notes: string;
  severity: 'avoid' | 'closed';
  location: [number, number];
  start_date: string;
  start_minute: number;
  end_date: string;
  end_minute: number;
}

const CLOSED = '#000000';
const AVOID = '#CC79A7';
const LIT = '#F0E442';
const DAY_BG = '#f4f3ee';
const NIGHT_BG = '#20242c';

const layers: LayerSpecification[] = [
  {
    id: 'lit-glow',
    type: 'line',
    source: 'roads',
    'source-layer': 'roads',
    filter: ['==', ['get', 'lit'], true],
    layout: { visibility: 'none', 'line-cap': 'round' },
    paint: { 'line-color': LIT, 'line-width': classWidth(2.4), 'line-opacity': 0.45 },
  },
  {
    id: 'no-bikes',
    type: 'line',
    source: 'roads',
    'source-layer': 'roads',
    filter: ['==', ['get', 'bike'], 'none'],
    paint: { 'line-color': '#8a8a8a', 'line-width': 1.2, 'line-dasharray': [2, 2] },
  },
  {
    id: 'roads',
    type: 'line',
    source: 'roads',
    'source-layer': 'roads',
    filter: ['!=', ['get', 'bike'], 'none'],
    layout: { 'line-cap': 'round', 'line-join': 'round' },
    paint: { 'line-color': classColourExpr, 'line-width': classWidthExpr },
  },
  {
    // Signed cycle routes: a thin dark outline on both sides of the road (line-gap-width).
    id: 'signed-routes',
    type: 'line',
    source: 'roads',
    'source-layer': 'roads',
    filter: ['!=', ['get', 'cycle_routes'], ''],
    paint: { 'line-color': '#1d2430', 'line-width': 1.2, 'line-gap-width': classWidthExpr },
  },
  {
    id: 'changes',
    type: 'line',
    source: 'roads',
    'source-layer': 'roads',
    filter: ['any', ['has', 'change'], ['has', 'avoidance']],
    paint: {
      'line-color': [
        'case',
        [
          'any',
          ['==', ['get', 'avoidance'], 'closed'],
          ['in', 'closed', ['coalesce', ['get', 'change'], '']],
        ],
        CLOSED,
        AVOID,
      ],
      'line-width': classWidth(1.6),
      'line-dasharray': [1.5, 1],
    },
  },
];

const pinLayer: LayerSpecification = {
  id: 'disruption-pins',
  type: 'circle',
  source: 'disruptions',
  paint: {
    'circle-radius': 8,
    'circle-color': ['match', ['get', 'severity'], 'closed', CLOSED, AVOID],
    'circle-stroke-color': '#ffffff',
    'circle-stroke-width': 2.5,
  },
};

const pad = (n: number) => String(n).padStart(2, '0');
const clock = (m: number) => (m >= 1440 ? '24:00' : `${pad(Math.floor(m / 60))}:${pad(m % 60)}`);
const when = (d: Disruption) =>
  `${d.start_date} ${clock(d.start_minute)} to ${d.end_date} ${clock(d.end_minute)} (local time)`;

const BIKE: Record<string, string> = {
  both: 'Cycling both ways',
  forward: 'Cycling one way only (along the line’s direction)',
  backward: 'Cycling one way only (against the line’s direction)',
  push: 'Walk your bike',
  none: 'No bicycles',
};
const CHANGE: Record<string, string> = {
  closed: 'Closed to routing (accepted report)',
  closed_forward: 'Closed one way (accepted report)',
  closed_backward: 'Closed one way (accepted report)',
  reweighted: 'Avoided more by routing (accepted report)',
};

function disruptionDetails(d: Disruption): HTMLElement {
  return el(
    'div',
    { class: 'card' },
    el('h3', {}, `${d.severity === 'closed' ? 'Closed' : 'Avoid'}: ${d.name || 'disruption'}`),
    el('p', {}, when(d)),
    ...(d.notes ? [el('p', {}, d.notes)] : []),
    el(
      'p',
      { class: 'hint' },
      `${d.id} · ${d.source === 'wzdx' ? 'imported roadworks' : 'entered by a curator'}`,
    ),
  );
}

function roadDetails(p: Record<string, unknown>, disruptions: Map<string, Disruption>): HTMLElement {
  const name = [p.name, p.ref].filter((x) => typeof x === 'string' && x !== '').join(' · ') || 'Unnamed road';
  const rows: [string, string][] = [
    [
      'Safety class',
      p.class === p.class_backward
        ? classLabel(String(p.class))
        : `${classLabel(String(p.class))} one way, ${classLabel(String(p.class_backward))} the other`,
    ],
    ['Access', BIKE[String(p.bike)] ?? String(p.bike)],
    ['Lit', p.lit ? 'Yes' : 'No or unknown'],
  ];
  if (p.cycle_routes) rows.push(['Signed routes', String(p.cycle_routes).split(';').join(', ')]);
  if (p.change)
    rows.push([
      'Change in force',
      `${CHANGE[String(p.change)] ?? String(p.change)}${p.factor ? ` (× ${Number(p.factor).toFixed(1)})` : ''}`,
    ]);
  if (p.avoidance)
    rows.push([
      'Now',
      `${p.avoidance === 'closed' ? 'Closed' : 'Avoided'}${p.window ? ` (${String(p.window)})` : p.disruption ? ' (disruption below)' : ''}`,
    ]);
  const dl = el('dl');
  for (const [k, v] of rows) dl.append(el('dt', {}, k), el('dd', {}, v));
  const card = el('div', { class: 'card' }, el('h3', {}, name), dl);
  const d = typeof p.disruption === 'string' ? disruptions.get(p.disruption) : undefined;
  if (d) card.append(disruptionDetails(d));
  return card;
}

function legend(): void {
  const ul = byId('legend');
  for (const c of CLASSES) ul.append(el('li', {}, swatch(c.colour), c.legend));
  ul.append(
    el('li', {}, swatch('#56B4E9', 'outlined'), 'Signed cycle route (outlined)'),
    el('li', {}, swatch('#8a8a8a', 'dashed'), 'No bicycles'),
    el('li', {}, swatch(CLOSED, 'dashed'), 'Closed now (change, window or disruption)'),
    el('li', {}, swatch(AVOID, 'dashed'), 'Avoided now'),
    el('li', { class: 'night-only' }, swatch(LIT), 'Lit road (night view)'),
  );
}

async function showDisruptions(map: MapLibreMap, city: City, known: Map<string, Disruption>): Promise<void> {
  const { disruptions } = await getJson<{ disruptions: Disruption[] }>(
    `/safety-map/${encodeURIComponent(city.id)}/disruptions/`,
  );
  known.clear();
  for (const d of disruptions) known.set(d.id, d);
  (map.getSource('disruptions') as GeoJSONSource).setData({
    type: 'FeatureCollection',
    features: disruptions.map((d) => ({
      type: 'Feature',
      geometry: { type: 'Point', coordinates: d.location },
      properties: { id: d.id, severity: d.severity },
    })),
  });
  const list = byId('disruptions');
  list.replaceChildren();
  if (disruptions.length === 0) list.append(el('li', { class: 'hint' }, 'None right now.'));
  for (const d of disruptions) {
    const b = el(
      'button',
      { type: 'button', class: 'linkish' },
      `${d.severity === 'closed' ? 'Closed' : 'Avoid'}: ${d.name}`,
    );
    b.addEventListener('click', () => {
      map.flyTo({ center: d.location, zoom: Math.max(map.getZoom(), 16) });
      byId('details').replaceChildren(disruptionDetails(d));
    });
    list.append(el('li', {}, b));
  }
}

async function main(): Promise<void> {
  const status = byId('status');
  try {
    const { cities, city } = await loadCities();
    const select = byId<HTMLSelectElement>('city');
    for (const c of cities)
      select.append(el('option', { value: c.id, ...(c.id === city.id ? { selected: '' } : {}) }, c.name));
    select.addEventListener('change', () => {
      location.href = `/map/?city=${encodeURIComponent(select.value)}`;
    });
    legend();
    const map = makeMap('map', city, roadsStyle(city, layers, DAY_BG));
    const disruptions = new Map<string, Disruption>();
    map.on('load', () => {
      map.addSource('disruptions', { type: 'geojson', data: { type: 'FeatureCollection', features: [] } });
      map.addLayer(pinLayer);
      showDisruptions(map, city, disruptions).catch((e: Error) => {
        status.textContent = `Disruptions could not be loaded: ${e.message}`;
      });
    });
    const night = byId<HTMLInputElement>('night');
    night.addEventListener('change', () => {
      const on = night.checked;
      document.body.classList.toggle('night', on);
      map.setPaintProperty('background', 'background-color', on ? NIGHT_BG : DAY_BG);
      map.setLayoutProperty('lit-glow', 'visibility', on ? 'visible' : 'none');
      map.setPaintProperty('roads', 'line-opacity', on ? ['case', ['==', ['get', 'lit'], true], 1, 0.4] : 1);
    });
    // Replaced on every click (closeOnClick would close the one just moved to the new point).
    const popup = new Popup({ closeButton: true, closeOnClick: false, maxWidth: '300px' });
    const clickable = ['disruption-pins', 'changes', 'signed-routes', 'roads', 'no-bikes'];
    /** Details of what is drawn at a point of the map (a pin first, then a change, then the road). */
    const detailsAt = (x: number, y: number): boolean => {
      const hits: MapGeoJSONFeature[] = map.queryRenderedFeatures(
        [
          [x - 6, y - 6],
          [x + 6, y + 6],
        ],
        { layers: clickable.filter((l) => map.getLayer(l)) },
      );
      const hit = hits[0];
      if (!hit) {
        popup.remove();
        return false;
      }
      const p = hit.properties;
      const d = hit.layer.id === 'disruption-pins' ? disruptions.get(String(p.id)) : undefined;
      const card = d ? disruptionDetails(d) : roadDetails(p, disruptions);
      byId('details').replaceChildren(card);
      popup
        .setLngLat(map.unproject([x, y]))
        .setDOMContent(card.cloneNode(true))
        .addTo(map);
      return true;
    };
    map.on('click', (e) => {
      detailsAt(e.point.x, e.point.y);
    });
    // Keyboard: pan with the arrow keys, then ask for what is under the centre.
    byId('centre-details').addEventListener('click', () => {
      const c = map.getCanvas();
      if (!detailsAt(c.clientWidth / 2, c.clientHeight / 2))
        byId('details').replaceChildren(el('p', { class: 'hint' }, 'No road at the map centre.'));
    });
    for (const l of clickable) {
      map.on('mouseenter', l, () => {
        map.getCanvas().style.cursor = 'pointer';
      });
      map.on('mouseleave', l, () => {
        map.getCanvas().style.cursor = '';
      });
    }
    (window as unknown as { quietwayMap: MapLibreMap }).quietwayMap = map;
  } catch (e) {
    status.textContent = (e as Error).message;
  }
}

void main();
