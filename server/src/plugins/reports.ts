// Road reports as application services: the road changes in routing (re-applied at start-up and
// kept in step with other processes' writes), the analysis worker, and the WZDx importer when a feed
// is configured. Stopped with the app.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { AnalysisWorker, ReportAnalyser } from '../reports/analysis.js';
import { RoadChanges } from '../reports/changes.js';
import { RoutingSync } from '../reports/sync.js';
import { WzdxImporter } from '../reports/wzdx.js';
import { contains } from '../routing/coverage.js';
import type { EngineService } from './engine.js';

declare module 'fastify' {
  interface FastifyInstance {
    roadChanges: RoadChanges;
    reportWorker: AnalysisWorker;
    wzdx: WzdxImporter | null;
  }
}

/** A point in a configured city this process does not load because QUIETWAY_CITIES leaves it out. */
function elsewhere(engine: EngineService, only: string[] | null): (p: [number, number]) => boolean {
  if (!only) return () => false;
  const others = engine.configured.filter((a) => !only.includes(a.id));
  return (p) => others.some((a) => contains(a, p));
}

export default fp(
  async (app: FastifyInstance, { config }: { config: Config }) => {
    const changes = new RoadChanges(app.engine, app.repos, app.log);
    // Read before the restore: a write another process makes meanwhile is re-synced at the first poll.
    const sync = new RoutingSync(app.repos, changes, app.log, config.routingSyncMs);
    changes.restore();
    const worker = new AnalysisWorker(
      new ReportAnalyser(app.engine, app.repos),
      app.repos,
      app.log,
      config.reportAnalysisMs,
      elsewhere(app.engine, config.cities),
    );
    const wzdx = config.wzdx
      ? new WzdxImporter(
          config.wzdx.url,
          config.wzdx.intervalSeconds,
          app.engine,
          app.repos,
          changes,
          app.log,
        )
      : null;
    app.decorate('roadChanges', changes);
    app.decorate('reportWorker', worker);
    app.decorate('wzdx', wzdx);
    app.addHook('onReady', async () => {
      worker.start();
      wzdx?.start();
      sync.start();
    });
    app.addHook('onClose', async () => {
      worker.stop();
      wzdx?.stop();
      sync.stop();
    });
  },
  { name: 'reports', dependencies: ['engine', 'storage'] },
);
