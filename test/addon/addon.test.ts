import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { native } from '../../server/src/native.js';

describe('native addon', () => {
  it('reports the engine crate version', () => {
    const cargo = fs.readFileSync(new URL('../../Cargo.toml', import.meta.url), 'utf8');
    const version = /^version = "([^"]+)"/m.exec(cargo)?.[1];
    expect(native().engineVersion()).toBe(version);
  });

  it('computes a great-circle distance in Rust', () => {
    const d = native().haversineMeters([-73.9903, 40.7359], [-73.9973, 40.7308]);
    expect(d).toBeGreaterThan(790);
    expect(d).toBeLessThan(850);
  });

  it('turns bad arguments into JS errors', () => {
    expect(() => native().haversineMeters([200, 0], [0, 0])).toThrow(
      /from must be a \[longitude, latitude\]/,
    );
  });
});
