import { values } from './entries';

describe('the entry points, required by a CommonJS app', () => {
  it('loads each from the CommonJS build', () => {
    for (const subpath of [
      '',
      '/options',
      '/sessions',
      '/transports',
      '/stores',
      '/redis',
      '/telemetry',
      '/catalog',
      '/protocol',
      '/testing',
    ]) {
      expect(require.resolve(`nestjs-model-context${subpath}`)).toMatch(/dist[\\/]cjs[\\/]/);
    }
    for (const [name, value] of Object.entries(values)) expect([name, value === undefined]).toEqual([name, false]);
  });
});
