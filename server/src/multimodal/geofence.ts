// Operators' geofencing zones (GBFS geofencing_zones) as fast point-in-polygon tests: where a ride may
// not start, end or pass through, for a given vehicle type.
import type { GbfsSystem } from '../gbfs/client.js';
import type { GeofencingZone } from '../gbfs/feeds.js';
import { area, type CoverageArea, contains } from '../routing/coverage.js';

interface Zone {
  area: CoverageArea;
  zone: GeofencingZone;
}

const cache = new WeakMap<GeofencingZone[], Zone[]>();

export class Geofence {
  private readonly zones: Zone[];

  constructor(system: GbfsSystem) {
    const zones = system.geofencing;
    let built = cache.get(zones);
    if (!built) {
      built = zones.map((z, i) => ({ zone: z, area: area(`${system.id}:${i}`, z.name, z.polygons) }));
      cache.set(zones, built);
    }
    this.zones = built;
  }

  get empty(): boolean {
    return this.zones.length === 0;
  }

  /** The first rule of the zone that applies to the type (GBFS: the first matching rule wins). */
  private rule(z: Zone, typeId: string | null) {
    return z.zone.rules.find((r) => r.typeIds === null || (typeId !== null && r.typeIds.includes(typeId)));
  }

  private allows(p: [number, number], typeId: string | null, what: 'start' | 'end' | 'through'): boolean {
    for (const z of this.zones) {
      if (!contains(z.area, p)) continue;
      const r = this.rule(z, typeId);
      if (r && !r[what]) return false;
    }
    return true;
  }

  canStart(p: [number, number], typeId: string | null): boolean {
    return this.allows(p, typeId, 'start');
  }

  canEnd(p: [number, number], typeId: string | null): boolean {
    return this.allows(p, typeId, 'end');
  }

  /** Whether a ride's flat geometry stays out of every zone it may not pass through. */
  canRide(flat: Float64Array, typeId: string | null): boolean {
    if (this.zones.length === 0) return true;
    for (let i = 0; i + 1 < flat.length; i += 2) {
      if (!this.allows([flat[i] as number, flat[i + 1] as number], typeId, 'through')) return false;
    }
    return true;
  }
}
