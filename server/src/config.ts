// Configuration from environment variables, validated once at start-up. Every setting has an
// embedded default so `npm run setup` starts a working server with no configuration at all.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { mergeRateLimits, type RateLimits, rateLimitsSchema } from './ratelimit.js';
import { defaultS3PublicUrl, type S3Settings } from './storage/s3-settings.js';

/** The repository root (server/src or server/dist → two levels up). */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** A whole number from the environment, within bounds. */
const int = (min: number, max: number, fallback: number) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

const envSchema = z.object({
  QUIETWAY_HOST: z.string().min(1).default('127.0.0.1'),
  QUIETWAY_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  QUIETWAY_DATA_DIR: z.string().min(1).default('data'),
  QUIETWAY_SHARED_DATA_DIR: z
    .string()
    .min(1)
    .default(path.join('..', 'shared', 'data')),
  QUIETWAY_PUBLIC_URL: z.url().optional(),
  QUIETWAY_LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  QUIETWAY_DATABASE: z.string().min(1).optional(),
  QUIETWAY_DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
    .optional(),
  QUIETWAY_TRUST_PROXY: z.stringbool().default(false),
  QUIETWAY_EXTERNAL_JWT_ISSUER: z.url().optional(),
  QUIETWAY_EXTERNAL_JWKS_URL: z.url().optional(),
  QUIETWAY_EXTERNAL_JWT_AUDIENCE: z.string().min(1).optional(),
  QUIETWAY_REFRESH_TOKEN_DAYS: z.coerce.number().int().min(1).max(365).default(30),
  QUIETWAY_RATE_LIMITS: z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (!v) return {};
      let json: unknown;
      try {
        json = JSON.parse(v);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be JSON, e.g. {"directions":{"key":[600,60]}}' });
        return z.NEVER;
      }
      const r = rateLimitsSchema.safeParse(json);
      if (!r.success) {
        ctx.addIssue({
          code: 'custom',
          message: r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '),
        });
        return z.NEVER;
      }
      return r.data;
    }),
  QUIETWAY_LOAD_CONCURRENCY: int(1, 64, 2),
  QUIETWAY_QUERY_GRAPH_MB: z.coerce.number().int().min(0).max(1_000_000).optional(),
  QUIETWAY_CITIES: z
    .string()
    .regex(/^\s*([a-z0-9_-]+(\s*,\s*[a-z0-9_-]+)*)?\s*$/, 'must be comma-separated city ids, e.g. nyc,london')
    .optional(),
  QUIETWAY_REDIS_URL: z.url({ protocol: /^rediss?$/ }).optional(),
  QUIETWAY_RETIRED_ENDPOINTS: z.string().default(''),
  QUIETWAY_V1_SUNSET: z.iso.date().optional(),
  QUIETWAY_PLACES_PROVIDER: z.enum(['local', 'google']).default('local'),
  QUIETWAY_GOOGLE_PLACES_API_KEY: z.string().optional(),
  QUIETWAY_GOOGLE_PLACES_URL: z.url().default('https://places.googleapis.com'),
  QUIETWAY_WEATHER_PROVIDER: z.enum(['open-meteo', 'weatherkit']).default('open-meteo'),
  QUIETWAY_OPEN_METEO_URL: z.url().default('https://api.open-meteo.com'),
  QUIETWAY_WEATHERKIT_URL: z.url().default('https://weatherkit.apple.com'),
  QUIETWAY_WEATHERKIT_TEAM_ID: z.string().optional(),
  QUIETWAY_WEATHERKIT_SERVICE_ID: z.string().optional(),
  QUIETWAY_WEATHERKIT_KEY_ID: z.string().optional(),
  QUIETWAY_WEATHERKIT_PRIVATE_KEY: z.string().optional(),
  QUIETWAY_MAX_IMAGE_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(10 * 1024 * 1024),
  QUIETWAY_REQUEST_TIMEOUT_MS: int(1000, 3_600_000, 60_000),
  QUIETWAY_HEADERS_TIMEOUT_MS: int(1000, 600_000, 15_000),
  QUIETWAY_MAX_CONNECTIONS_PER_CLIENT: int(0, 1_000_000, 64),
  QUIETWAY_MAX_CONNECTIONS: int(0, 1_000_000, 1024),
  QUIETWAY_MAX_BODY_BYTES: int(1024, 1024 * 1024 * 1024, 1024 * 1024),
  QUIETWAY_MAX_ROUTING_BODY_BYTES: int(1024, 1024 * 1024 * 1024, 16 * 1024),
  QUIETWAY_MAX_JSON_DEPTH: int(2, 10_000, 32),
  QUIETWAY_MAX_UPLOAD_BYTES: int(1024, 1024 * 1024 * 1024, 25 * 1024 * 1024),
  QUIETWAY_MAX_UPLOADS_PER_USER: int(1, 1000, 2),
  QUIETWAY_SECRET_KEY: z.string().min(1).optional(),
  QUIETWAY_SECRET_KEY_FILE: z.string().min(1).optional(),
  QUIETWAY_PREVIOUS_SECRET_KEYS: z.string().default(''),
  QUIETWAY_STORAGE_SWEEP_MINUTES: int(0, 7 * 24 * 60, 60),
  QUIETWAY_S3_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  QUIETWAY_S3_BUCKET: z
    .string()
    .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be an S3 bucket name (3-63 of a-z, 0-9, . and -)')
    .optional(),
  QUIETWAY_S3_REGION: z.string().min(1).default('us-east-1'),
  QUIETWAY_S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  QUIETWAY_S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  QUIETWAY_S3_PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  QUIETWAY_S3_TIMEOUT_MS: int(100, 600_000, 30_000),
  QUIETWAY_REPORT_ANALYSIS_MS: z.coerce.number().int().min(0).default(1000),
  QUIETWAY_ROUTING_SYNC_MS: z.coerce.number().int().min(0).max(60_000).default(250),
  QUIETWAY_WZDX_URL: z.url().optional(),
  QUIETWAY_WZDX_INTERVAL_SECONDS: z.coerce.number().int().min(10).default(300),
  // The engine looks for a road within 1,000 m at most; past that nothing snaps anyway.
  QUIETWAY_SNAP_RADIUS_M: int(1, 1000, 250),
  QUIETWAY_GBFS_SYSTEMS: z.string().default(''),
  QUIETWAY_GBFS_TIMEOUT_MS: int(100, 60_000, 4000),
  QUIETWAY_GBFS_STALE_SECONDS: int(1, 86_400, 180),
  QUIETWAY_GBFS_MIN_REFRESH_SECONDS: int(1, 3600, 10),
  QUIETWAY_PARKING: z.string().default(''),
});

const parkingSchema = z.record(
  z.string(),
  z.object({
    regular: z.array(z.string().min(1)).optional(),
    ebike_bays: z.array(z.string().min(1)).optional(),
    ebike_bay_areas: z.array(z.string().min(1)).optional(),
    ebike_operators: z.record(z.string(), z.array(z.string().min(1))).optional(),
  }),
);

/** QUIETWAY_PARKING: a JSON object of parking data per city, or the path of a file holding one. */
function parkingConfig(value: string): z.infer<typeof parkingSchema> | null {
  const v = value.trim();
  if (!v) return null;
  let text = v;
  if (!v.startsWith('{')) {
    try {
      text = fs.readFileSync(path.resolve(PROJECT_ROOT, v), 'utf8');
    } catch (err) {
      throw new ConfigError(
        `Invalid configuration:\n  QUIETWAY_PARKING: neither a JSON object nor a readable file (${(err as Error).message})`,
      );
    }
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ConfigError('Invalid configuration:\n  QUIETWAY_PARKING: not valid JSON');
  }
  const r = parkingSchema.safeParse(json);
  if (!r.success) {
    const lines = r.error.issues.map((i) => `  QUIETWAY_PARKING.${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  return r.data;
}

const gbfsSystemSchema = z.object({
  id: z.string().regex(/^[a-z0-9_-]{1,64}$/, 'lower-case letters, digits, _ and -'),
  city: z.string().min(1),
  url: z.url(),
  name: z.string().min(1).optional(),
  system_id: z.string().min(1).optional(),
});

/** QUIETWAY_GBFS_SYSTEMS: a JSON array of systems, or the path of a file holding one. */
function gbfsSystems(value: string): z.infer<typeof gbfsSystemSchema>[] {
  const v = value.trim();
  if (!v) return [];
  let text = v;
  if (!v.startsWith('[')) {
    try {
      text = fs.readFileSync(path.resolve(PROJECT_ROOT, v), 'utf8');
    } catch (err) {
      throw new ConfigError(
        `Invalid configuration:\n  QUIETWAY_GBFS_SYSTEMS: neither a JSON array nor a readable file (${(err as Error).message})`,
      );
    }
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ConfigError('Invalid configuration:\n  QUIETWAY_GBFS_SYSTEMS: not valid JSON');
  }
  const r = z.array(gbfsSystemSchema).safeParse(json);
  if (!r.success) {
    const lines = r.error.issues.map((i) => `  QUIETWAY_GBFS_SYSTEMS.${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const ids = new Set<string>();
  for (const s of r.data) {
    if (ids.has(s.id))
      throw new ConfigError(`Invalid configuration:\n  QUIETWAY_GBFS_SYSTEMS: id ${s.id} appears twice`);
    ids.add(s.id);
  }
  return r.data;
}

export interface Config {
  host: string;
  port: number;
  /** Root of everything the server writes: SQLite, graphs, uploaded images. */
  dataDir: string;
  /** Built city graphs, one folder per city id. */
  graphDir: string;
  /** Where self-hosters drop their OSM extracts. */
  osmDir: string;
  /** The project's shared sample data (OSM extracts, boundaries, GBFS recordings). */
  sharedDataDir: string;
  publicUrl: string;
  logLevel: (typeof LOG_LEVELS)[number];
  /** The SQLite database file. */
  databasePath: string;
  /** PostgreSQL instead of the SQLite file (several processes or nodes sharing one store). */
  databaseUrl: string | null;
  /** Take the client IP from X-Forwarded-For (behind a reverse proxy). */
  trustProxy: boolean;
  /** Tokens of another identity provider accepted beside our own (issuer and JWKS URL). */
  externalIdp: { issuer: string; jwksUrl: string; audience: string } | null;
  refreshTokenDays: number;
  rateLimits: RateLimits;
  /**
   * A Redis (`redis://` or `rediss://`) that several server processes share: rate-limit windows
   * live there instead of in each process (null: in-process).
   */
  redisUrl: string | null;
  /**
   * The cities whose graphs this process loads (a node of a sharded deployment); null: every graph
   * in the graph folder.
   */
  cities: string[] | null;
  /**
   * How many city graphs load at once after start-up (each load holds a thread of libuv's pool,
   * which routing shares).
   */
  loadConcurrency: number;
  /**
   * Megabytes each city's cycling metrics may spend on pruned query graphs (queries four to five
   * times faster); null: the engine's default (64).
   */
  queryGraphMb: number | null;
  /** Endpoints answered with 410, as `METHOD /path/` (e.g. `POST /directions/`). */
  retiredEndpoints: string[];
  /** Announced sunset date of the deprecated v1 routes (Sunset header), if any. */
  v1Sunset: string | null;
  /** Largest accepted image upload, bytes. */
  maxImageBytes: number;
  /** What one client may make the server spend (docs/api.md "Limits"). */
  limits: {
    /** Whole-request deadline, headers and body (a stalled body is cut here). */
    requestTimeoutMs: number;
    /** Deadline for the request line and headers. */
    headersTimeoutMs: number;
    /** Open connections per client address (0: no cap). */
    maxConnectionsPerClient: number;
    /** Open connections in all (0: no cap). */
    maxConnections: number;
    /** Largest JSON body, bytes (routing endpoints have their own, smaller cap). */
    maxBodyBytes: number;
    maxRoutingBodyBytes: number;
    /** Deepest nesting of arrays and objects in a JSON body. */
    maxJsonDepth: number;
    /** Largest multipart upload request, bytes, all parts together. */
    maxUploadBytes: number;
    /** Uploads one rider may have in progress at once. */
    maxUploadsPerUser: number;
  };
  /**
   * The key that encrypts signing keys at rest: from QUIETWAY_SECRET_KEY, else the file
   * QUIETWAY_SECRET_KEY_FILE (made at first start when missing). Previous keys only decrypt.
   */
  secretKey: { value: string | null; file: string; previous: string[] };
  /** Minutes between sweeps of left-over upload files (0: only at start). */
  storageSweepMinutes: number;
  /**
   * Uploaded images in an S3-compatible bucket instead of the data folder (set by
   * QUIETWAY_S3_BUCKET); null: the local folder.
   */
  s3: S3Settings | null;
  /** Place search: the embedded index (`local`) or Google Places API (New). */
  places: { provider: 'local' | 'google'; googleApiKey: string | null; googleUrl: string };
  /** Weather: an Open-Meteo-compatible service (no key) or Apple WeatherKit. */
  weather: {
    provider: 'open-meteo' | 'weatherkit';
    openMeteoUrl: string;
    weatherKitUrl: string;
    /** All four WeatherKit settings, or null when any is missing (the weather answers 503 then). */
    weatherKit: { teamId: string; serviceId: string; keyId: string; privateKeyPem: string } | null;
  };
  /** How often the report analysis worker looks for new reports, ms (0 turns it off). */
  reportAnalysisMs: number;
  /**
   * How often each process looks for road changes and disruptions other processes wrote to the
   * shared database, ms (reports/sync.ts; 0 turns it off).
   */
  routingSyncMs: number;
  /** A WZDx v4.x GeoJSON feed imported into disruptions on a schedule, if any. */
  wzdx: { url: string; intervalSeconds: number } | null;
  /** A waypoint farther than this (metres) from any routable way has no route (docs/api.md). */
  snapRadiusM: number;
  /** Bike-share systems read from their GBFS feeds (multi-modal trips). */
  gbfs: {
    systems: { id: string; city: string; url: string; name?: string; system_id?: string }[];
    timeoutMs: number;
    staleSeconds: number;
    minRefreshSeconds: number;
  };
  /**
   * Parking data per city for multi-modal `parking_type` (paths relative to the shared data
   * folder), replacing per city the defaults: the shared data's rack files (multimodal/parking.ts
   * DEFAULT_PARKING).
   */
  parking: Record<
    string,
    {
      regular?: string[];
      ebike_bays?: string[];
      ebike_bay_areas?: string[];
      ebike_operators?: Record<string, string[]>;
    }
  > | null;
}

export class ConfigError extends Error {}

/** Reads and validates the configuration; throws a ConfigError listing every bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  const external = [
    e.QUIETWAY_EXTERNAL_JWT_ISSUER,
    e.QUIETWAY_EXTERNAL_JWKS_URL,
    e.QUIETWAY_EXTERNAL_JWT_AUDIENCE,
  ].filter(Boolean).length;
  if (external !== 0 && external !== 3) {
    throw new ConfigError(
      'Invalid configuration:\n  QUIETWAY_EXTERNAL_JWT_ISSUER, QUIETWAY_EXTERNAL_JWKS_URL and QUIETWAY_EXTERNAL_JWT_AUDIENCE go together',
    );
  }
  const dataDir = path.resolve(PROJECT_ROOT, e.QUIETWAY_DATA_DIR);
  const trimUrl = (u: string) => u.replace(/\/+$/, '');
  let weatherKitKey = e.QUIETWAY_WEATHERKIT_PRIVATE_KEY?.trim();
  if (weatherKitKey && !weatherKitKey.startsWith('-----BEGIN')) {
    // A path to the .p8 file rather than its text.
    try {
      weatherKitKey = fs.readFileSync(path.resolve(PROJECT_ROOT, weatherKitKey), 'utf8');
    } catch (err) {
      throw new ConfigError(
        `Invalid configuration:\n  QUIETWAY_WEATHERKIT_PRIVATE_KEY: neither a PEM key nor a readable file (${(err as Error).message})`,
      );
    }
  }
  const s3Set = [e.QUIETWAY_S3_ENDPOINT, e.QUIETWAY_S3_ACCESS_KEY_ID, e.QUIETWAY_S3_SECRET_ACCESS_KEY];
  if (!e.QUIETWAY_S3_BUCKET && (s3Set.some(Boolean) || e.QUIETWAY_S3_PUBLIC_URL)) {
    throw new ConfigError(
      'Invalid configuration:\n  QUIETWAY_S3_BUCKET: needed with the other QUIETWAY_S3_* settings',
    );
  }
  if (!e.QUIETWAY_S3_ACCESS_KEY_ID !== !e.QUIETWAY_S3_SECRET_ACCESS_KEY) {
    throw new ConfigError(
      'Invalid configuration:\n  QUIETWAY_S3_ACCESS_KEY_ID and QUIETWAY_S3_SECRET_ACCESS_KEY go together',
    );
  }
  const s3Endpoint = e.QUIETWAY_S3_ENDPOINT ? trimUrl(e.QUIETWAY_S3_ENDPOINT) : null;
  // A key pasted into one line keeps its line breaks as \n.
  weatherKitKey = weatherKitKey?.replaceAll('\\n', '\n');
  const shownHost = e.QUIETWAY_HOST === '0.0.0.0' || e.QUIETWAY_HOST === '::' ? 'localhost' : e.QUIETWAY_HOST;
  return {
    host: e.QUIETWAY_HOST,
    port: e.QUIETWAY_PORT,
    dataDir,
    graphDir: path.join(dataDir, 'graphs'),
    osmDir: path.join(dataDir, 'osm'),
    sharedDataDir: path.resolve(PROJECT_ROOT, e.QUIETWAY_SHARED_DATA_DIR),
    publicUrl: e.QUIETWAY_PUBLIC_URL ?? `http://${shownHost}:${e.QUIETWAY_PORT}`,
    logLevel: e.QUIETWAY_LOG_LEVEL,
    databasePath: e.QUIETWAY_DATABASE
      ? path.resolve(PROJECT_ROOT, e.QUIETWAY_DATABASE)
      : path.join(dataDir, 'quietway.db'),
    databaseUrl: e.QUIETWAY_DATABASE_URL ?? null,
    trustProxy: e.QUIETWAY_TRUST_PROXY,
    externalIdp:
      e.QUIETWAY_EXTERNAL_JWT_ISSUER && e.QUIETWAY_EXTERNAL_JWKS_URL && e.QUIETWAY_EXTERNAL_JWT_AUDIENCE
        ? {
            issuer: e.QUIETWAY_EXTERNAL_JWT_ISSUER,
            jwksUrl: e.QUIETWAY_EXTERNAL_JWKS_URL,
            audience: e.QUIETWAY_EXTERNAL_JWT_AUDIENCE,
          }
        : null,
    refreshTokenDays: e.QUIETWAY_REFRESH_TOKEN_DAYS,
    rateLimits: mergeRateLimits(e.QUIETWAY_RATE_LIMITS),
    redisUrl: e.QUIETWAY_REDIS_URL ?? null,
    // Empty (as a compose file may leave it): every graph.
    cities: e.QUIETWAY_CITIES?.trim() ? e.QUIETWAY_CITIES.split(',').map((c) => c.trim()) : null,
    loadConcurrency: e.QUIETWAY_LOAD_CONCURRENCY,
    queryGraphMb: e.QUIETWAY_QUERY_GRAPH_MB ?? null,
    retiredEndpoints: e.QUIETWAY_RETIRED_ENDPOINTS.split(',')
      .map((x) => x.trim().replace(/\s+/g, ' '))
      .filter(Boolean),
    v1Sunset: e.QUIETWAY_V1_SUNSET ?? null,
    maxImageBytes: e.QUIETWAY_MAX_IMAGE_BYTES,
    limits: {
      requestTimeoutMs: e.QUIETWAY_REQUEST_TIMEOUT_MS,
      // Node refuses a headers deadline longer than the whole request's.
      headersTimeoutMs: Math.min(e.QUIETWAY_HEADERS_TIMEOUT_MS, e.QUIETWAY_REQUEST_TIMEOUT_MS),
      maxConnectionsPerClient: e.QUIETWAY_MAX_CONNECTIONS_PER_CLIENT,
      maxConnections: e.QUIETWAY_MAX_CONNECTIONS,
      maxBodyBytes: e.QUIETWAY_MAX_BODY_BYTES,
      maxRoutingBodyBytes: e.QUIETWAY_MAX_ROUTING_BODY_BYTES,
      maxJsonDepth: e.QUIETWAY_MAX_JSON_DEPTH,
      maxUploadBytes: e.QUIETWAY_MAX_UPLOAD_BYTES,
      maxUploadsPerUser: e.QUIETWAY_MAX_UPLOADS_PER_USER,
    },
    secretKey: {
      value: e.QUIETWAY_SECRET_KEY ?? null,
      file: e.QUIETWAY_SECRET_KEY_FILE
        ? path.resolve(PROJECT_ROOT, e.QUIETWAY_SECRET_KEY_FILE)
        : path.join(dataDir, 'secret.key'),
      previous: e.QUIETWAY_PREVIOUS_SECRET_KEYS.split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    },
    storageSweepMinutes: e.QUIETWAY_STORAGE_SWEEP_MINUTES,
    s3: e.QUIETWAY_S3_BUCKET
      ? {
          endpoint: s3Endpoint,
          bucket: e.QUIETWAY_S3_BUCKET,
          region: e.QUIETWAY_S3_REGION,
          accessKeyId: e.QUIETWAY_S3_ACCESS_KEY_ID ?? null,
          secretAccessKey: e.QUIETWAY_S3_SECRET_ACCESS_KEY ?? null,
          publicUrl: trimUrl(
            e.QUIETWAY_S3_PUBLIC_URL ??
              defaultS3PublicUrl(s3Endpoint, e.QUIETWAY_S3_BUCKET, e.QUIETWAY_S3_REGION),
          ),
          timeoutMs: e.QUIETWAY_S3_TIMEOUT_MS,
        }
      : null,
    places: {
      provider: e.QUIETWAY_PLACES_PROVIDER,
      googleApiKey: e.QUIETWAY_GOOGLE_PLACES_API_KEY || null,
      googleUrl: trimUrl(e.QUIETWAY_GOOGLE_PLACES_URL),
    },
    weather: {
      provider: e.QUIETWAY_WEATHER_PROVIDER,
      openMeteoUrl: trimUrl(e.QUIETWAY_OPEN_METEO_URL),
      weatherKitUrl: trimUrl(e.QUIETWAY_WEATHERKIT_URL),
      weatherKit:
        e.QUIETWAY_WEATHERKIT_TEAM_ID &&
        e.QUIETWAY_WEATHERKIT_SERVICE_ID &&
        e.QUIETWAY_WEATHERKIT_KEY_ID &&
        weatherKitKey
          ? {
              teamId: e.QUIETWAY_WEATHERKIT_TEAM_ID,
              serviceId: e.QUIETWAY_WEATHERKIT_SERVICE_ID,
              keyId: e.QUIETWAY_WEATHERKIT_KEY_ID,
              privateKeyPem: weatherKitKey,
            }
          : null,
    },
    reportAnalysisMs: e.QUIETWAY_REPORT_ANALYSIS_MS,
    routingSyncMs: e.QUIETWAY_ROUTING_SYNC_MS,
    wzdx: e.QUIETWAY_WZDX_URL
      ? { url: e.QUIETWAY_WZDX_URL, intervalSeconds: e.QUIETWAY_WZDX_INTERVAL_SECONDS }
      : null,
    snapRadiusM: e.QUIETWAY_SNAP_RADIUS_M,
    gbfs: {
      systems: gbfsSystems(e.QUIETWAY_GBFS_SYSTEMS),
      timeoutMs: e.QUIETWAY_GBFS_TIMEOUT_MS,
      staleSeconds: e.QUIETWAY_GBFS_STALE_SECONDS,
      minRefreshSeconds: e.QUIETWAY_GBFS_MIN_REFRESH_SECONDS,
    },
    parking: parkingConfig(e.QUIETWAY_PARKING),
  };
}
