/**
 * `npm run sample:scale-out`: two instances sharing one Redis, behind a round-robin proxy.
 * PORT (default 3000) is the proxy; the instances take PORT+1 and PORT+2. REDIS_URL defaults to
 * redis://127.0.0.1:6379.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { roundRobinProxy, type Backend } from './proxy.js';

const host = '127.0.0.1';
const port = Number(process.env.PORT ?? 3000);
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const instanceJs = fileURLToPath(new URL('./instance.js', import.meta.url));

const backends: Backend[] = [
  { host, port: port + 1 },
  { host, port: port + 2 },
];
const children: ChildProcess[] = backends.map((backend, i) =>
  spawn(process.execPath, [instanceJs], {
    env: {
      ...process.env,
      REDIS_URL: redisUrl,
      PORT: String(backend.port),
      HOST: host,
      INSTANCE: `instance ${String.fromCharCode(65 + i)} (:${backend.port})`,
    },
    stdio: 'inherit',
  }),
);

const proxy = roundRobinProxy(
  backends,
  process.env.VERBOSE ? (method, backend) => console.log(`proxy: ${method} → :${backend.port}`) : undefined,
);
proxy.listen(port, host, () =>
  console.log(`round-robin proxy: http://${host}:${port}/mcp → :${port + 1}, :${port + 2} (Redis ${redisUrl})`),
);

let stopping = false;
const stop = (): void => {
  stopping = true;
  proxy.close();
  for (const child of children) child.kill('SIGTERM');
  setTimeout(() => process.exit(0), 2000).unref();
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
for (const child of children) {
  child.once('exit', (code, signal) => {
    if (!stopping) console.log(`an instance exited (${signal ?? code}); the other keeps serving every session`);
  });
}
