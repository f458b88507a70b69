// Words for the engine's guidance steps: maneuver instructions, voice instructions and banners,
// per the interface spec's rules (Step, voice and banner instructions). English only.
import type { RouteStep } from '../../../addon/index.js';

export type Mode = 'cycling' | 'walking';

export interface VoiceInstruction {
  distance_along_geometry: number;
  announcement: string;
  ssml_announcement: string;
}

export interface BannerComponent {
  text: string;
  type: 'text' | 'road-name';
}

export interface BannerText {
  text: string;
  components: BannerComponent[];
  type: string;
  modifier?: string;
}

export interface BannerInstruction {
  distance_along_geometry: number;
  primary: BannerText;
  secondary?: BannerText;
  sub?: BannerText;
}

export interface ApiStep {
  distance: number;
  duration: number;
  delta_elevation: number;
  geometry: { type: 'LineString'; coordinates: number[][] };
  name: string;
  mode: Mode;
  safety_code?: number;
  safety_classification?: string;
  exits: string;
  maneuver: {
    type: string;
    modifier?: string;
    instruction: string;
    location: number[];
    bearing_before: number;
    bearing_after: number;
  };
  cycle_routes: string[] | null;
  lit?: boolean;
  voice_instructions: VoiceInstruction[];
  banner_instructions: BannerInstruction[];
}

/** A maneuver that follows within this many metres is announced with the one before it. */
export const COMPOUND_M = 30;
/** The imminent voice cue, and how far into an approach the first cue is placed. */
const IMMINENT_M = 40;
const FIRST_CUE_INTO_APPROACH_M = 25;
/** Approaches longer than this get a cue in the middle too. */
const LONG_APPROACH_M = 1000;

const round1 = (x: number) => Math.round(x * 10) / 10;

/** Coordinates to 1e-6 degrees (about 0.1 m): OSM's own precision is 1e-7, and shorter numbers make
 * responses smaller and faster to write. */
const r6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** `[lon, lat]` pairs of a flat coordinate array from the engine. */
export function pairs(flat: Float64Array): number[][] {
  const out: number[][] = new Array(flat.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = [r6(flat[2 * i] as number), r6(flat[2 * i + 1] as number)];
  return out;
}

export const roundedLocation = (p: number[]) => [r6(p[0] as number), r6(p[1] as number)];

const COMPASS = ['north', 'northeast', 'east', 'southeast', 'south', 'southwest', 'west', 'northwest'];
const compass = (bearing: number) => COMPASS[Math.round((((bearing % 360) + 360) % 360) / 45) % 8] as string;

const ordinal = (n: number) => {
  const s = ['th', 'st', 'nd', 'rd'];
  const v = n % 100;
  return `${n}${s[(v - 20) % 10] ?? s[v] ?? s[0]}`;
};

const roadName = (s: RouteStep) => s.name || s.ref;

/** The spec's maneuver type names. */
export function maneuverType(kind: string): string {
  switch (kind) {
    case 'depart':
      return 'Start';
    case 'turn':
      return 'Turn';
    case 'continue':
      return 'Continue';
    case 'roundabout':
      return 'roundabout';
    case 'uturn':
      return 'U-turn';
    default:
      return 'Arrive';
  }
}

/** The action of a step's maneuver, in words, without the road ("turn left", "bear right"). */
function action(s: RouteStep): string {
  const m = s.modifier ?? 'straight';
  switch (s.kind) {
    case 'depart':
      return `head ${compass(s.bearingAfter)}`;
    case 'uturn':
      return 'make a U-turn';
    case 'roundabout':
      return `at the roundabout, take the ${ordinal(s.exit ?? 1)} exit`;
    case 'continue':
      return 'continue';
    default:
      if (m.startsWith('slight')) return `bear ${m.slice(7)}`;
      if (m === 'straight') return 'continue straight';
      return `turn ${m}`;
  }
}

/** "turn left onto Main Street" — the road is named except on roundabouts (the next step names it). */
function phrase(s: RouteStep, arrive: string): string {
  if (s.kind === 'arrive') return arrive;
  const road = roadName(s);
  const a = action(s);
  if (s.kind === 'roundabout' || !road) return a;
  if (s.kind === 'depart') return `${a} on ${road}`;
  return `${a} onto ${road}`;
}

const capital = (t: string) => t.charAt(0).toUpperCase() + t.slice(1);

function instruction(s: RouteStep, arrive: string): string {
  let text = capital(phrase(s, arrive));
  if (s.push && s.kind !== 'arrive') text += ' and walk your bike';
  return text;
}

function bannerFor(s: RouteStep, arrive: string): BannerText {
  const road = roadName(s);
  const text =
    s.kind === 'arrive' ? arrive : s.kind === 'roundabout' ? capital(action(s)) : road || capital(action(s));
  const components: BannerComponent[] =
    s.kind !== 'arrive' && s.kind !== 'roundabout' && road
      ? [{ text: road, type: 'road-name' }]
      : [{ text, type: 'text' }];
  return {
    text,
    components,
    type: maneuverType(s.kind),
    ...(s.modifier ? { modifier: s.modifier } : {}),
  };
}

const ssml = (text: string) =>
  `<speak><amazon:effect name="drc"><prosody rate="1.08">${text
    .replaceAll('&', '&amp;')
    .replaceAll('<', '&lt;')
    .replaceAll('>', '&gt;')}</prosody></amazon:effect></speak>`;

/**
 * Voice cue distances for an approach of `length` metres, far to near: the first about 25 m into
 * the approach, the last an imminent cue at about 40 m, one in the middle of long approaches; a
 * short approach gets a single cue.
 */
export function cueDistances(length: number): number[] {
  const first = length - FIRST_CUE_INTO_APPROACH_M;
  if (first <= IMMINENT_M + 20) return [round1(Math.min(IMMINENT_M, length))];
  const out = [round1(first)];
  if (length > LONG_APPROACH_M) out.push(round1((first + IMMINENT_M) / 2));
  out.push(IMMINENT_M);
  return out;
}

/**
 * The API steps of one leg. `arrive` is the arrival's wording ("Arrive at destination", or
 * "Arrive at waypoint 2" on a leg that ends at a via point).
 */
export function wordSteps(steps: RouteStep[], mode: Mode, arrive: string): ApiStep[] {
  return steps.map((s, i) => {
    const next = steps[i + 1];
    const after = steps[i + 2];
    // The next maneuver is compound when the one after it follows within ~30 m (never arrival).
    const compound =
      next &&
      after &&
      next.kind !== 'arrive' &&
      after.kind !== 'arrive' &&
      round1(next.distance) < COMPOUND_M;
    const voice: VoiceInstruction[] = [];
    const banners: BannerInstruction[] = [];
    if (next) {
      const announce = capital(
        compound ? `${phrase(next, arrive)}, then ${phrase(after, arrive)}` : phrase(next, arrive),
      );
      const cues = cueDistances(s.distance);
      cues.forEach((d, k) => {
        const far = cues.length > 1 && k === 0;
        const road = roadName(s);
        const text =
          far && next.kind !== 'arrive'
            ? `${road ? `Continue on ${road}` : 'Continue'}, then ${announce.charAt(0).toLowerCase()}${announce.slice(1)}`
            : announce;
        voice.push({ distance_along_geometry: d, announcement: text, ssml_announcement: ssml(text) });
      });
      const banner: BannerInstruction = {
        distance_along_geometry: round1(s.distance),
        primary: bannerFor(next, arrive),
      };
      if (next.kind !== 'arrive' && next.ref && next.name && next.ref !== next.name) {
        banner.secondary = {
          text: next.ref,
          components: [{ text: next.ref, type: 'text' }],
          type: maneuverType(next.kind),
        };
      }
      if (compound && after) banner.sub = bannerFor(after, arrive);
      banners.push(banner);
    }
    const cyclingStep = mode === 'cycling' && s.kind !== 'arrive';
    return {
      distance: round1(s.distance),
      duration: round1(s.duration),
      delta_elevation: round1(s.deltaElevation),
      geometry: { type: 'LineString' as const, coordinates: pairs(s.geometry) },
      name: roadName(s),
      mode,
      ...(mode === 'cycling' ? { safety_code: s.safetyCode } : {}),
      ...(cyclingStep ? { safety_classification: s.safetyClass } : {}),
      exits: s.kind === 'roundabout' && s.exit ? String(s.exit) : '',
      maneuver: {
        type: maneuverType(s.kind),
        ...(s.modifier ? { modifier: s.modifier } : {}),
        instruction: instruction(s, arrive),
        location: roundedLocation(s.location),
        bearing_before: Math.round(s.bearingBefore),
        bearing_after: Math.round(s.bearingAfter),
      },
      cycle_routes: s.cycleRoutes.length > 0 ? s.cycleRoutes : null,
      ...(mode === 'cycling' ? { lit: s.lit } : {}),
      voice_instructions: voice,
      banner_instructions: banners,
    };
  });
}
