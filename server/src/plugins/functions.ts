// Place search and weather as application services, over the providers the configuration selects.
// The local place index is read from the graph folder on the first place search (or right after
// the server starts listening), so building the app stays fast.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Config } from '../config.js';
import { GooglePlaceProvider } from '../places/google.js';
import { LocalPlaceIndex, LocalPlaceProvider } from '../places/local.js';
import { PlaceSearch } from '../places/service.js';
import { OpenMeteoProvider } from '../weather/openmeteo.js';
import { RideWeather } from '../weather/rides.js';
import { WeatherService } from '../weather/service.js';
import { WeatherKitProvider } from '../weather/weatherkit.js';

declare module 'fastify' {
  interface FastifyInstance {
    places: PlaceSearch;
    weather: WeatherService;
    rideWeather: RideWeather;
  }
}

export default fp(
  async (app: FastifyInstance, { config }: { config: Config }) => {
    let index: LocalPlaceIndex | null = null;
    const localIndex = async (): Promise<LocalPlaceIndex> => {
      if (index) return index;
      const { index: loaded, failures } = LocalPlaceIndex.load(config.graphDir);
      for (const f of failures) app.log.error({ file: f.file }, `place index not loaded: ${f.error}`);
      app.log.info(
        { cities: loaded.stats.cities, ms: Math.round(loaded.stats.buildMs) },
        `place index: ${loaded.stats.entries} entries`,
      );
      index = loaded;
      return loaded;
    };
    const p = config.places;
    const provider =
      p.provider === 'google'
        ? new GooglePlaceProvider(p.googleApiKey ?? undefined, p.googleUrl)
        : new LocalPlaceProvider(localIndex);
    app.decorate('places', new PlaceSearch(provider));

    const w = config.weather;
    app.decorate(
      'weather',
      new WeatherService(
        w.provider === 'weatherkit'
          ? new WeatherKitProvider(w.weatherKit, w.weatherKitUrl)
          : new OpenMeteoProvider(w.openMeteoUrl),
      ),
    );

    const rideWeather = new RideWeather(app.weather, app.repos.platform, app.log);
    app.decorate('rideWeather', rideWeather);
    // Fetches under way finish before the app is closed (a write that still comes too late is
    // caught and logged).
    app.addHook('onClose', async () => rideWeather.drain());

    if (p.provider === 'local') {
      // A running server reads the index at once, so the first rider does not wait for it.
      app.addHook('onListen', async () => {
        setImmediate(() => void localIndex().catch((err) => app.log.error({ err }, 'place index')));
      });
    }
    app.addHook('onClose', async () => index?.close());
  },
  { name: 'functions', dependencies: ['storage'] },
);
