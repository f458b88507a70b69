// Several server processes each run a report analysis worker on one database: the first outcome
// written for a report wins; a report no longer `received` (analysed elsewhere, or decided by a
// reviewer meanwhile) is left as it is.
import { describe, expect, it } from 'vitest';
import { openStore } from '../../server/src/db/database.js';
import { createRepositories } from '../../server/src/db/repositories.js';
import { testConfig } from '../helpers.js';

describe('analysis outcomes with several workers', () => {
  it('only a report still received takes an outcome', () => {
    const config = testConfig();
    const [one, two] = [createRepositories(openStore(config)), createRepositories(openStore(config))];
    const report = one.reports.create({
      issueType: 'road_unsafe',
      issueSubtype: null,
      description: '',
      roadName: '',
      location: [-74, 40.7],
      userId: null,
      apiKeyId: null,
      source: null,
      via: 'partner',
      seenRoute: null,
    });
    const outcome = (summary: string) => ({
      status: 'in_review' as const,
      summary,
      city: 'nyc',
      analysis: {},
      proposal: null,
      duplicateOf: null,
    });
    expect(one.reports.analysed(report.id, outcome('first'))).toBe(true);
    expect(two.reports.analysed(report.id, outcome('second'))).toBe(false);
    expect(two.reports.byId(report.id)?.summary).toBe('first');
    expect(two.reports.received(10)).toEqual([]);
    one.close();
    two.close();
  });
});
