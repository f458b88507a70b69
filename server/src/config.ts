// Configuration from environment variables, validated once at start-up. Every setting has an
// embedded default so `npm run setup` starts a working server with no configuration at all.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

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
  };
}
