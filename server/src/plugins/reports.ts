// Road reports as application services: the road changes in routing (re-applied to each city as its
// graph loads and kept in step with other processes' writes), the analysis worker, and the WZDx
// importer when a feed is configured. Stopped with the app.
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

/**
 * A report the analysis worker leaves for now: in a configured city this process does not load
 * because QUIETWAY_CITIES leaves it out (another node's), or outside every ready city while graphs
 * are still loading (it may lie in one of them: analysed once they are in).
 */
function elsewhere(engine: EngineService, only: string[] | null): (p: [number, number]) => boolean {
  const others = only ? engine.configured.filter((a) => !only.includes(a.id)) : [];
  return (p) =>
    others.some((a) => contains(a, p)) ||
    (engine.loading().length > 0 && !engine.cities().some((c) => c.coverage.some((a) => contains(a, p))));
}

export default fp(
  async (app: FastifyInstance, { config }: { config: Config }) => {
    const changes = new RoadChanges(app.engine, app.repos, app.log);
    // Read before any city is restored: a write another process makes meanwhile is re-synced at the
    // first poll (a city still loading reads the database as it arrives).
    const sync = new RoutingSync(app.repos, changes, app.log, config.routingSyncMs);
    app.engine.onCity((city) => changes.adopt(city));
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
    let closed = false;
    app.addHook('onReady', async () => {
      worker.start();
      sync.start();
      // Once every graph has loaded (or failed): reports left while cities loaded are analysed now,
      // and the feed's roadworks find their cities.
      void app.engine.ready.then(() => {
        if (closed) return;
        worker.kick();
        wzdx?.start();
      });
    });
    app.addHook('onClose', async () => {
      closed = true;
      worker.stop();
      wzdx?.stop();
      sync.stop();
    });
  },
  { name: 'reports', dependencies: ['engine', 'storage'] },
);
