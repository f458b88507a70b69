import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../server/src/app.js';
import { ConfigError, loadConfig } from '../../server/src/config.js';
import { buildGraph, FIXTURES, testConfig } from '../helpers.js';

describe('GET /health/', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    const config = testConfig();
    buildGraph('nyc', [path.join(FIXTURES, 'junctions.osm')], config.graphDir);
    app = await buildApp({ config });
  });
  afterAll(() => app.close());

  it('answers versions and every spec city with its state and graph version', async () => {
    const res = await app.inject({ method: 'GET', url: '/health/' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.status).toBe('ok');
    expect(body.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(body.engine_version).toMatch(/^\d+\.\d+\.\d+/);
    expect(body.cities).toHaveLength(5);
    expect(body.cities[0]).toMatchObject({
      id: 'nyc',
      name: 'New York City',
      state: 'loaded',
      graph_version: expect.stringMatching(/^[0-9a-f]{16}$/),
      data_bbox: [expect.any(Number), expect.any(Number), expect.any(Number), expect.any(Number)],
    });
    expect(body.cities.slice(1).map((c: { state: string }) => c.state)).toEqual(Array(4).fill('no_data'));
  });

  it('answers without the trailing slash too', async () => {
    const res = await app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
  });

  it('answers unknown paths with the spec body', async () => {
    const res = await app.inject({ method: 'POST', url: '/directions/v7/', payload: {} });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ error: 'Unknown endpoint or API version' });
  });
});

describe('a server without graphs', () => {
  it('still starts and lists every city without data', async () => {
    const app = await buildApp({ config: testConfig() });
    const res = await app.inject({ method: 'GET', url: '/health/' });
    const cities = res.json().cities as { id: string; state: string; graph_version: null }[];
    expect(cities.map((c) => c.id)).toEqual(['nyc', 'los-angeles', 'sf-bay-area', 'chicago', 'london']);
    expect(cities.every((c) => c.state === 'no_data' && c.graph_version === null)).toBe(true);
    await app.close();
  });
});

describe('configuration', () => {
  it('has embedded defaults', () => {
    const c = loadConfig({});
    expect(c.host).toBe('127.0.0.1');
    expect(c.port).toBe(8080);
    expect(c.dataDir.endsWith('data')).toBe(true);
  });

  it('names every bad variable', () => {
    expect(() => loadConfig({ QUIETWAY_PORT: 'eighty', QUIETWAY_LOG_LEVEL: 'loud' })).toThrowError(
      ConfigError,
    );
    try {
      loadConfig({ QUIETWAY_PORT: 'eighty', QUIETWAY_LOG_LEVEL: 'loud' });
    } catch (err) {
      expect((err as Error).message).toContain('QUIETWAY_PORT');
      expect((err as Error).message).toContain('QUIETWAY_LOG_LEVEL');
    }
  });
});
