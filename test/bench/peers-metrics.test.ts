// The peers benchmark's engine-neutral measures (bench/peers/metrics.mjs) on hand-drawn ways.
import { describe, expect, it } from 'vitest';
import {
  classify,
  decodePolyline,
  haversine,
  normalize,
  pushedOn,
  quietwayPushedM,
  summarize,
  type Way,
  wayIndex,
  wayOf,
} from '../../bench/peers/metrics.mjs';

// A primary avenue running north with no bike lane, a secondary street east with a painted lane, and
// a quiet residential street east, 100 m further north (positions near Manhattan).
const ways: Way[] = [
  {
    id: 1,
    hw: 'primary',
    infra: false,
    coords: [
      [-74, 40.72],
      [-74, 40.722],
    ],
  },
  {
    id: 2,
    hw: 'secondary',
    infra: true,
    coords: [
      [-74, 40.72],
      [-73.998, 40.72],
    ],
  },
  {
    id: 3,
    hw: 'residential',
    infra: false,
    coords: [
      [-74, 40.7209],
      [-73.998, 40.7209],
    ],
  },
];
const index = wayIndex(ways);

describe('classify', () => {
  it('reads each route segment against the way it runs along', () => {
    expect(wayOf(index, [-74, 40.7201], [-74, 40.7205])?.id).toBe(1);
    // Midpoint on the avenue's axis but running across it (east): the crossing street, not the avenue.
    expect(wayOf(index, [-74.0001, 40.7209], [-73.9995, 40.7209])?.id).toBe(3);
    // Nothing within 3 m.
    expect(wayOf(index, [-73.999, 40.7205], [-73.999, 40.7206])).toBeNull();
  });

  it('sums metres on major roads, on bare major roads and unmatched', () => {
    const route = [
      [-74, 40.7205],
      [-74, 40.72],
      [-73.999, 40.72],
      [-73.999, 40.7205],
    ];
    const c = classify(index, route);
    const up = haversine([-74, 40.7205], [-74, 40.72]);
    const east = haversine([-74, 40.72], [-73.999, 40.72]);
    const off = haversine([-73.999, 40.72], [-73.999, 40.7205]);
    expect(c.length_m).toBeCloseTo(up + east + off, 6);
    expect(c.major_m).toBeCloseTo(up + east, 6);
    expect(c.bare_major_m).toBeCloseTo(up, 6);
    expect(c.unmatched_m).toBeCloseTo(off, 6);
  });
});

describe('normalize', () => {
  it('decodes a polyline6 shape', () => {
    // Google's example polyline, at precision 5.
    expect(decodePolyline('_p~iF~ps|U_ulLnnqC_mqNvxq`@', 5)).toEqual([
      [-120.2, 38.5],
      [-120.95, 40.7],
      [-126.453, 43.252],
    ]);
  });

  it('leaves out the arrival and counts U-turns in each engine’s own words, with where they are', () => {
    const q = normalize('quietway', {
      route: {
        geometry: {
          coordinates: [
            [0, 0],
            [0, 1],
          ],
        },
        steps: [
          { maneuver: { type: 'Start', location: [0, 0] }, distance: 100, name: 'A Street' },
          { maneuver: { type: 'U-turn', location: [0, 1] }, distance: 10, name: 'A Street' },
          { maneuver: { type: 'Arrive', location: [0, 0.9] }, distance: 0, name: '' },
        ],
      },
    });
    expect(q?.steps).toEqual([
      { uturn: false, distance_m: 100, location: [0, 0], name: 'A Street' },
      { uturn: true, distance_m: 10, location: [0, 1], name: 'A Street' },
    ]);
    const o = normalize('osrm', {
      code: 'Ok',
      routes: [
        {
          geometry: {
            coordinates: [
              [0, 0],
              [0, 1],
            ],
          },
          legs: [
            {
              steps: [
                { maneuver: { type: 'depart', location: [0, 0] }, distance: 50, name: 'B Avenue' },
                {
                  maneuver: { type: 'continue', modifier: 'uturn', location: [0, 1] },
                  distance: 20,
                  name: '',
                },
                { maneuver: { type: 'arrive' }, distance: 0 },
              ],
            },
          ],
        },
      ],
    });
    expect(o?.steps.map((s) => s.uturn)).toEqual([false, true]);
    expect(o?.steps[1]?.location).toEqual([0, 1]);
    const v = normalize('valhalla', {
      trip: {
        status: 0,
        legs: [
          {
            shape: '_p~iF~ps|U_ulLnnqC',
            maneuvers: [
              { type: 1, length: 0.2, begin_shape_index: 0, street_names: ['C Road'] },
              { type: 13, length: 0.01, begin_shape_index: 1 },
              { type: 4, length: 0, begin_shape_index: 1 },
            ],
          },
        ],
      },
    });
    expect(v?.steps).toEqual([
      { uturn: false, distance_m: 200, location: [-12.02, 3.85], name: 'C Road' },
      { uturn: true, distance_m: 10, location: [-12.095, 4.07], name: '' },
    ]);
    expect(normalize('osrm', { code: 'NoRoute' })).toBeNull();
    expect(normalize('quietway', { route: null })).toBeNull();
  });
});

describe('pushed metres', () => {
  it('reads Quietway’s from step times and OSRM’s from its pushing mode', () => {
    // 100 m ridden at 15 km/h is 24 s; 100 m pushed at 5 km/h is 72 s.
    expect(quietwayPushedM(100, 24)).toBeCloseTo(0);
    expect(quietwayPushedM(100, 72)).toBeCloseTo(100);
    expect(quietwayPushedM(100, 48)).toBeCloseTo(50);
    expect(quietwayPushedM(100, 10)).toBe(0);
    const q = normalize('quietway', {
      route: {
        geometry: {
          coordinates: [
            [0, 0],
            [0, 1],
          ],
        },
        steps: [
          {
            maneuver: { type: 'Start', location: [0, 0] },
            distance: 100,
            duration: 24,
            name: 'A',
            geometry: {
              coordinates: [
                [0, 0],
                [0, 0.5],
              ],
            },
          },
          {
            maneuver: { type: 'Turn', location: [0, 0.5] },
            distance: 40,
            duration: 28.8,
            name: 'B',
            geometry: {
              coordinates: [
                [0, 0.5],
                [0, 1],
              ],
            },
          },
          { maneuver: { type: 'Arrive', location: [0, 1] }, distance: 0, duration: 0, name: '' },
        ],
      },
    });
    expect(q?.pushed).toHaveLength(1);
    expect(q?.pushed?.[0]?.pushed_m).toBeCloseTo(40);
    const o = normalize('osrm', {
      code: 'Ok',
      routes: [
        {
          geometry: {
            coordinates: [
              [0, 0],
              [0, 1],
            ],
          },
          legs: [
            {
              steps: [
                { maneuver: { type: 'depart', location: [0, 0] }, distance: 50, mode: 'cycling', name: '' },
                {
                  maneuver: { type: 'turn', location: [0, 1] },
                  distance: 20,
                  mode: 'pushing bike',
                  name: '',
                },
                { maneuver: { type: 'arrive' }, distance: 0, mode: 'cycling' },
              ],
            },
          ],
        },
      ],
    });
    expect(o?.pushed?.map((s) => s.pushed_m)).toEqual([20]);
    expect(normalize('valhalla', { trip: { status: 0, legs: [] } })?.pushed).toBeNull();
    expect(pushedOn(wayIndex([]), null)).toEqual({ pushed_m: null, pushed_bare_major_m: null });
  });

  it('counts the cut over ridden metres apart from the metres walked', () => {
    // Direct rides 400 bare major metres of 1000; SuperSafe rides 100 of 1000 and walks 200 m beside
    // a major road: 100 of 800 ridden against 400 of 1000.
    const direct = {
      length_m: 1000,
      major_m: 400,
      bare_major_m: 400,
      unmatched_m: 0,
      pushed_m: 0,
      pushed_bare_major_m: 0,
      steps: [],
    };
    const safe = {
      length_m: 1000,
      major_m: 300,
      bare_major_m: 300,
      unmatched_m: 0,
      pushed_m: 200,
      pushed_bare_major_m: 200,
      steps: [],
    };
    const s = summarize([{ crow_m: 800, route: safe, ref: direct }]);
    expect(s.pushed_share).toBeCloseTo(0.2);
    expect(s.ridden_km).toBeCloseTo(0.8);
    expect(s.bare_major_cut).toBeCloseTo(0.25);
    expect(s.bare_major_cut_over_ridden).toBeCloseTo(1 - 100 / 800 / 0.4);
    const unknown = summarize([{ crow_m: 800, route: { ...safe, pushed_m: null }, ref: direct }]);
    expect(unknown.pushed_share).toBeNull();
  });
});

describe('summarize', () => {
  it('prices each bare major-road metre avoided in extra metres against the most direct route', () => {
    const direct = { length_m: 1000, major_m: 400, bare_major_m: 400, unmatched_m: 0, steps: [] };
    const safe = {
      length_m: 1150,
      major_m: 100,
      bare_major_m: 100,
      unmatched_m: 0,
      steps: [
        { uturn: false, distance_m: 10 },
        { uturn: false, distance_m: 500 },
      ],
    };
    const s = summarize([
      { crow_m: 800, route: safe, ref: direct },
      { crow_m: 500, route: null, ref: direct },
    ]);
    expect(s.unroutable).toBe(1);
    expect(s.length_over_direct_median).toBeCloseTo(1.15);
    expect(s.length_over_direct_total).toBeCloseTo(1.15);
    expect(s.bare_major_cut).toBeCloseTo(0.75);
    expect(s.extra_m_per_m_avoided).toBeCloseTo(0.5);
    expect(s.steps_per_km).toBeCloseTo(2 / 1.15);
    expect(s.short_step_share).toBe(0.5);
  });
});
