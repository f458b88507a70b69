// Types of bench/peers/metrics.mjs, for the tests.
export interface Way {
  id: number;
  hw: string;
  infra: boolean;
  nodes?: number[];
  coords: [number, number][];
}
export interface WayIndex {
  ways: Way[];
}
export interface Classified {
  length_m: number;
  major_m: number;
  bare_major_m: number;
  unmatched_m: number;
}
export interface Step {
  uturn: boolean;
  /** Where the step's manoeuvre is, `[lon, lat]`, and the way's name. */
  location?: number[];
  name?: string;
  distance_m: number;
}
/** A step walked in part: metres pushed, its length and its line. */
export interface PushedStep {
  pushed_m: number;
  distance_m: number;
  coords: number[][];
}
export interface Pushed {
  pushed_m: number | null;
  pushed_bare_major_m: number | null;
}
export interface Trip {
  crow_m: number;
  route: (Classified & Partial<Pushed> & { steps: Step[] }) | null;
  ref: (Classified & Partial<Pushed> & { steps: Step[] }) | null;
}
export declare const MAJOR: Set<string>;
export declare const SHORT_STEP_M: number;
export declare function haversine(a: number[], b: number[]): number;
export declare function wayIndex(ways: Way[]): WayIndex;
export declare function wayOf(index: WayIndex, a: number[], b: number[]): Way | null;
export declare function classify(index: WayIndex, coords: number[][]): Classified;
export declare function nearWay(
  index: WayIndex,
  p: number[],
  m: number,
  ok?: (hw: string) => boolean,
): boolean;
export declare function decodePolyline(str: string, precision?: number): [number, number][];
export declare function quietwayPushedM(distance: number, duration: number): number;
export declare function normalize(
  engine: 'quietway' | 'osrm' | 'valhalla',
  body: unknown,
): { coords: number[][]; steps: Step[]; pushed: PushedStep[] | null } | null;
export declare function pushedOn(index: WayIndex, pushed: PushedStep[] | null): Pushed;
export declare function quantile(sorted: number[], q: number): number;
export declare function summarize(trips: Trip[]): {
  routed: number;
  unroutable: number;
  length_over_crow_median: number;
  length_over_direct_median: number;
  length_over_direct_p90: number;
  length_over_direct_total: number;
  length_km: number;
  major_road_km: number;
  bare_major_road_km: number;
  direct_bare_major_road_km: number;
  bare_major_cut: number;
  extra_m_per_m_avoided: number | null;
  unmatched_share: number;
  steps_per_km: number;
  short_step_share: number;
  uturn_steps: number;
  ridden_km: number | null;
  pushed_km: number | null;
  pushed_share: number | null;
  bare_major_cut_over_ridden: number | null;
};
