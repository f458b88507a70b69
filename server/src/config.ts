// Configuration from environment variables, validated once at start-up. Every setting has an
// embedded default so `npm run setup` starts a working server with no configuration at all.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { mergeRateLimits, type RateLimits, rateLimitsSchema } from './ratelimit.js';

/** The repository root (server/src or server/dist → two levels up). */
export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

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
  QUIETWAY_TRUST_PROXY: z.stringbool().default(false),
  QUIETWAY_EXTERNAL_JWT_ISSUER: z.url().optional(),
  QUIETWAY_EXTERNAL_JWKS_URL: z.url().optional(),
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
  QUIETWAY_RETIRED_ENDPOINTS: z.string().default(''),
  QUIETWAY_V1_SUNSET: z.iso.date().optional(),
  QUIETWAY_MAX_IMAGE_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(10 * 1024 * 1024),
  QUIETWAY_REPORT_ANALYSIS_MS: z.coerce.number().int().min(0).default(1000),
  QUIETWAY_WZDX_URL: z.url().optional(),
  QUIETWAY_WZDX_INTERVAL_SECONDS: z.coerce.number().int().min(10).default(300),
});

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
  /** Take the client IP from X-Forwarded-For (behind a reverse proxy). */
  trustProxy: boolean;
  /** Tokens of another identity provider accepted beside our own (issuer and JWKS URL). */
  externalIdp: { issuer: string; jwksUrl: string } | null;
  refreshTokenDays: number;
  rateLimits: RateLimits;
  /** Endpoints answered with 410, as `METHOD /path/` (e.g. `POST /directions/`). */
  retiredEndpoints: string[];
  /** Announced sunset date of the deprecated v1 routes (Sunset header), if any. */
  v1Sunset: string | null;
  /** Largest accepted image upload, bytes. */
  maxImageBytes: number;
  /** How often the report analysis worker looks for new reports, ms (0 turns it off). */
  reportAnalysisMs: number;
  /** A WZDx v4.x GeoJSON feed imported into disruptions on a schedule, if any. */
  wzdx: { url: string; intervalSeconds: number } | null;
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
  if (Boolean(e.QUIETWAY_EXTERNAL_JWT_ISSUER) !== Boolean(e.QUIETWAY_EXTERNAL_JWKS_URL)) {
    throw new ConfigError(
      'Invalid configuration:\n  QUIETWAY_EXTERNAL_JWT_ISSUER and QUIETWAY_EXTERNAL_JWKS_URL go together',
    );
  }
  const dataDir = path.resolve(PROJECT_ROOT, e.QUIETWAY_DATA_DIR);
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
    trustProxy: e.QUIETWAY_TRUST_PROXY,
    externalIdp:
      e.QUIETWAY_EXTERNAL_JWT_ISSUER && e.QUIETWAY_EXTERNAL_JWKS_URL
        ? { issuer: e.QUIETWAY_EXTERNAL_JWT_ISSUER, jwksUrl: e.QUIETWAY_EXTERNAL_JWKS_URL }
        : null,
    refreshTokenDays: e.QUIETWAY_REFRESH_TOKEN_DAYS,
    rateLimits: mergeRateLimits(e.QUIETWAY_RATE_LIMITS),
    retiredEndpoints: e.QUIETWAY_RETIRED_ENDPOINTS.split(',')
      .map((x) => x.trim().replace(/\s+/g, ' '))
      .filter(Boolean),
    v1Sunset: e.QUIETWAY_V1_SUNSET ?? null,
    maxImageBytes: e.QUIETWAY_MAX_IMAGE_BYTES,
    reportAnalysisMs: e.QUIETWAY_REPORT_ANALYSIS_MS,
    wzdx: e.QUIETWAY_WZDX_URL
      ? { url: e.QUIETWAY_WZDX_URL, intervalSeconds: e.QUIETWAY_WZDX_INTERVAL_SECONDS }
      : null,
  };
}
