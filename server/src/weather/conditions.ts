// The spec's weather condition codes (WeatherKit's vocabulary) and the mapping from the WMO weather
// interpretation codes Open-Meteo reports (WMO 4677, the subset Open-Meteo documents). The table is
// repeated in docs/api.md.

export const WMO_CONDITIONS: Record<number, string> = {
  0: 'Clear',
  1: 'MostlyClear',
  2: 'PartlyCloudy',
  3: 'Cloudy',
  45: 'Foggy',
  48: 'Foggy',
  51: 'Drizzle',
  53: 'Drizzle',
  55: 'Drizzle',
  56: 'FreezingDrizzle',
  57: 'FreezingDrizzle',
  61: 'Rain',
  63: 'Rain',
  65: 'HeavyRain',
  66: 'FreezingRain',
  67: 'FreezingRain',
  71: 'Flurries',
  73: 'Snow',
  75: 'HeavySnow',
  77: 'Snow',
  80: 'Rain',
  81: 'Rain',
  82: 'HeavyRain',
  85: 'Snow',
  86: 'HeavySnow',
  95: 'Thunderstorms',
  96: 'Thunderstorms',
  99: 'StrongStorms',
};

/** A WMO code Open-Meteo has not documented (the list has been stable for years). */
export const UNKNOWN_CONDITION = 'Unknown';

export function conditionOfWmo(code: number): string {
  return WMO_CONDITIONS[code] ?? UNKNOWN_CONDITION;
}

/** Below this it is `Cold`, above `HOT_ABOVE_F` `Hot` (interface spec "Weather"). */
export const COLD_BELOW_F = 40;
export const HOT_ABOVE_F = 85;

/** `conditions`: the primary code, then a temperature modifier when one applies. */
export function conditionsOf(primary: string, temperatureF: number): string[] {
  if (temperatureF < COLD_BELOW_F) return [primary, 'Cold'];
  if (temperatureF > HOT_ABOVE_F) return [primary, 'Hot'];
  return [primary];
}

/** Condition codes as words for people (`PartlyCloudy` → `Partly cloudy`). */
export function conditionWords(code: string): string {
  const words = code.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}
