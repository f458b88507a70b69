// A bike-share system read live from its GBFS feeds: auto-discovery from `gbfs.json` (1.1 to 3.0, or a
// 3.0 manifest naming it), then each feed refreshed on its own `ttl`. Requests read the last good
// snapshot and never wait on the network. A feed that fails, answers slowly (time-out) or has not
// been fetched successfully for too long leaves that part of the system out (docked stations or
// free-floating vehicles) and says so in `health()`, which /health/ shows.
import type { FastifyBaseLogger } from 'fastify';
import { fetchJson } from '../upstream.js';
import {
  dataOf,
  type GeofencingZone,
  lastUpdatedOf,
  manifestUrl,
  type PricingPlan,
  readDiscovery,
  readGeofencing,
  readPricingPlans,
  readStationStatus,
  readStations,
  readSystemInformation,
  readVehicles,
  readVehicleTypes,
  type Station,
  type StationStatus,
  type SystemInformation,
  ttlOf,
  type Vehicle,
  type VehicleType,
} from './feeds.js';

export interface GbfsSystemConfig {
  /** Our id for the system (`citibike`). */
  id: string;
  /** The city (graph id) whose trips it serves. */
  city: string;
  /** Its `gbfs.json`, or a GBFS 3.0 `manifest.json`. */
  url: string;
  /** Shown name when the system publishes no system_information. */
  name?: string;
  /** The system's id in a 3.0 manifest listing several. */
  system_id?: string;
}

export interface GbfsOptions {
  /** Per-request time-out, ms. */
  timeoutMs: number;
  /** A feed not fetched successfully for longer than max(this, 3 × its ttl) is stale. */
  staleSeconds: number;
  /** Shortest and longest wait between two fetches of a feed, s (a ttl of 0 means "every time"). */
  minRefreshSeconds: number;
  maxRefreshSeconds: number;
}

/** The feeds read; the rest of a discovery file is ignored. */
const FEEDS = [
  'system_information',
  'vehicle_types',
  'station_information',
  'station_status',
  'free_bike_status',
  'vehicle_status',
  'system_pricing_plans',
  'geofencing_zones',
] as const;
type FeedName = (typeof FEEDS)[number];

interface FeedState {
  url: string;
  ttl: number;
  /** Epoch ms of the last successful fetch. */
  fetchedAt: number | null;
  lastUpdated: number | null;
  error: string | null;
  timer: NodeJS.Timeout | null;
}

/** A station with its live status. */
export interface LiveStation extends Station, StationStatus {}

export type SystemStatus = 'ok' | 'degraded' | 'stale' | 'failing' | 'starting';

export interface SystemHealth {
  id: string;
  city: string;
  name: string;
  status: SystemStatus;
  version: string | null;
  stations: number;
  vehicles: number;
  feeds: {
    name: string;
    status: 'ok' | 'stale' | 'failing' | 'starting';
    last_fetched: string | null;
    last_updated: string | null;
    ttl: number;
    error: string | null;
  }[];
  error: string | null;
}

export class GbfsSystem {
  readonly id: string;
  readonly city: string;
  version: string | null = null;
  private feeds = new Map<FeedName, FeedState>();
  private discoveryError: string | null = null;
  private discoveryTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  private firstRound: Promise<void> | null = null;

  // Parsed feeds.
  private info: SystemInformation | null = null;
  private types = new Map<string, VehicleType>();
  private stationInfo = new Map<string, Station>();
  private stationStatus = new Map<string, StationStatus>();
  private freeVehicles: Vehicle[] = [];
  private plans: PricingPlan[] = [];
  private zones: GeofencingZone[] = [];
  private joined: LiveStation[] | null = null;
  /** Bodies read against the vehicle types, read again when the types arrive or change. */
  private raw: { status?: unknown; vehicles?: unknown } = {};

  constructor(
    readonly config: GbfsSystemConfig,
    private readonly options: GbfsOptions,
    private readonly log: FastifyBaseLogger,
    private readonly now: () => number = Date.now,
  ) {
    this.id = config.id;
    this.city = config.city;
  }

  /** Starts discovery and the refresh loop; resolves once every feed has been tried once. */
  start(): Promise<void> {
    this.firstRound ??= this.discover();
    return this.firstRound;
  }

  stop(): void {
    this.stopped = true;
    if (this.discoveryTimer) clearTimeout(this.discoveryTimer);
    for (const f of this.feeds.values()) if (f.timer) clearTimeout(f.timer);
  }

  get name(): string {
    return this.info?.name ?? this.config.name ?? this.id;
  }

  get appLinks(): { android: string | null; ios: string | null; logo: string | null } {
    return {
      android: this.info?.android ?? null,
      ios: this.info?.ios ?? null,
      logo: this.info?.logo ?? null,
    };
  }

  get pricingPlans(): PricingPlan[] {
    return this.fresh('system_pricing_plans') ? this.plans : [];
  }

  get vehicleTypes(): Map<string, VehicleType> {
    return this.types;
  }

  /** Geofencing zones (empty when the system publishes none). */
  get geofencing(): GeofencingZone[] {
    return this.fresh('geofencing_zones') ? this.zones : [];
  }

  /** Stations with live status; empty when either station feed is missing, failing or stale. */
  stations(): LiveStation[] {
    if (!this.fresh('station_information') || !this.fresh('station_status')) return [];
    if (!this.joined) {
      const out: LiveStation[] = [];
      for (const [id, s] of this.stationInfo) {
        const st = this.stationStatus.get(id);
        if (st) out.push({ ...s, ...st });
      }
      this.joined = out;
    }
    return this.joined;
  }

  /** Free-floating vehicles for rent; empty when the vehicle feed is missing, failing or stale. */
  vehicles(): Vehicle[] {
    const feed = this.feeds.has('vehicle_status') ? 'vehicle_status' : 'free_bike_status';
    return this.fresh(feed) ? this.freeVehicles : [];
  }

  /** Whether a feed holds data fetched recently enough to use. */
  private fresh(name: FeedName): boolean {
    const f = this.feeds.get(name);
    return !!f && f.fetchedAt !== null && this.now() - f.fetchedAt <= this.staleMs(f);
  }

  private staleMs(f: FeedState): number {
    return Math.max(this.options.staleSeconds, 3 * f.ttl) * 1000;
  }

  private refreshMs(ttl: number): number {
    return Math.min(this.options.maxRefreshSeconds, Math.max(this.options.minRefreshSeconds, ttl)) * 1000;
  }

  private get(url: string): Promise<unknown> {
    return fetchJson(url, { timeoutMs: this.options.timeoutMs, headers: { accept: 'application/json' } });
  }

  /** Reads the discovery file (following a 3.0 manifest), then fetches every feed it lists. */
  private async discover(): Promise<void> {
    let ttl = 300;
    try {
      let body = await this.get(this.config.url);
      const target = manifestUrl(body, this.config.system_id);
      if (target) body = await this.get(target);
      ttl = ttlOf(body) ?? ttl;
      const d = readDiscovery(body);
      this.version = d.version;
      this.discoveryError = null;
      const rounds: Promise<void>[] = [];
      for (const name of FEEDS) {
        const url = d.feeds.get(name);
        const known = this.feeds.get(name);
        if (!url) {
          if (known?.timer) clearTimeout(known.timer);
          this.feeds.delete(name);
          continue;
        }
        if (known && known.url === url) continue;
        if (known?.timer) clearTimeout(known.timer);
        const state: FeedState = {
          url,
          ttl: 60,
          fetchedAt: null,
          lastUpdated: null,
          error: null,
          timer: null,
        };
        this.feeds.set(name, state);
        rounds.push(this.refresh(name, state));
      }
      await Promise.all(rounds);
    } catch (err) {
      this.discoveryError = (err as Error).message;
      this.log.warn({ gbfs: this.id, url: this.config.url }, `GBFS discovery failed: ${this.discoveryError}`);
      ttl = Math.min(ttl, 30);
    }
    if (!this.stopped) {
      this.discoveryTimer = setTimeout(() => void this.discover(), this.refreshMs(ttl));
      this.discoveryTimer.unref();
    }
  }

  private async refresh(name: FeedName, state: FeedState): Promise<void> {
    let next = state.ttl;
    try {
      const body = await this.get(state.url);
      this.apply(name, body);
      state.ttl = ttlOf(body) ?? state.ttl;
      state.lastUpdated = lastUpdatedOf(body);
      state.fetchedAt = this.now();
      if (state.error) this.log.info({ gbfs: this.id, feed: name }, 'GBFS feed recovered');
      state.error = null;
      next = state.ttl;
    } catch (err) {
      state.error = (err as Error).message;
      this.log.warn({ gbfs: this.id, feed: name, url: state.url }, `GBFS feed failed: ${state.error}`);
      next = Math.min(state.ttl || 30, 30);
    }
    if (!this.stopped && this.feeds.get(name) === state) {
      state.timer = setTimeout(() => void this.refresh(name, state), this.refreshMs(next));
      state.timer.unref();
    }
  }

  private apply(name: FeedName, body: unknown): void {
    dataOf(body);
    switch (name) {
      case 'system_information':
        this.info = readSystemInformation(body);
        break;
      case 'vehicle_types':
        this.types = readVehicleTypes(body);
        if (this.raw.status) this.stationStatus = readStationStatus(this.raw.status, this.types);
        if (this.raw.vehicles) this.freeVehicles = readVehicles(this.raw.vehicles, this.types);
        this.joined = null;
        break;
      case 'station_information':
        this.stationInfo = readStations(body);
        this.joined = null;
        break;
      case 'station_status':
        this.stationStatus = readStationStatus(body, this.types);
        this.raw.status = body;
        this.joined = null;
        break;
      case 'free_bike_status':
      case 'vehicle_status':
        this.freeVehicles = readVehicles(body, this.types);
        this.raw.vehicles = body;
        break;
      case 'system_pricing_plans':
        this.plans = readPricingPlans(body);
        break;
      case 'geofencing_zones':
        this.zones = readGeofencing(body);
        break;
    }
  }

  health(): SystemHealth {
    const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
    const feeds = [...this.feeds.entries()].map(([name, f]) => ({
      name,
      status:
        f.fetchedAt === null
          ? f.error
            ? ('failing' as const)
            : ('starting' as const)
          : this.now() - f.fetchedAt > this.staleMs(f)
            ? ('stale' as const)
            : f.error
              ? ('failing' as const)
              : ('ok' as const),
      last_fetched: iso(f.fetchedAt),
      last_updated: iso(f.lastUpdated === null ? null : f.lastUpdated * 1000),
      ttl: f.ttl,
      error: f.error,
    }));
    const usable = this.stations().length > 0 || this.vehicles().length > 0;
    const bad = feeds.filter((f) => f.status !== 'ok');
    let status: SystemStatus;
    if (this.feeds.size === 0) status = this.discoveryError ? 'failing' : 'starting';
    else if (bad.length === 0) status = 'ok';
    else if (usable) status = 'degraded';
    else if (bad.every((f) => f.status === 'starting')) status = 'starting';
    else status = bad.some((f) => f.status === 'stale') ? 'stale' : 'failing';
    return {
      id: this.id,
      city: this.city,
      name: this.name,
      status,
      version: this.version,
      stations: this.stations().length,
      vehicles: this.vehicles().length,
      feeds,
      error: this.discoveryError,
    };
  }
}
