import { createServer, request, type IncomingMessage, type Server } from 'node:http';

export interface Backend {
  host: string;
  port: number;
}

/**
 * A load balancer in thirty lines: every request goes to the next backend in turn, with no
 * stickiness at all (the worst case for a stateful protocol, which is the point). A backend that
 * refuses the connection is skipped, as a health-checked balancer would; a response cut by a
 * dying backend is cut for the client too, which then resumes with Last-Event-ID.
 */
export function roundRobinProxy(backends: Backend[], onRoute?: (method: string, backend: Backend) => void): Server {
  let next = 0;
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const attempt = (tries: number): void => {
        const backend = backends[next++ % backends.length];
        const upstream = request(
          { ...backend, method: req.method, path: req.url, headers: req.headers },
          (answer: IncomingMessage) => {
            onRoute?.(req.method ?? '?', backend);
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
            answer.on('aborted', () => res.destroy());
          },
        );
        upstream.on('error', (error: NodeJS.ErrnoException) => {
          if (!res.headersSent && error.code === 'ECONNREFUSED' && tries < backends.length) return attempt(tries + 1);
          if (!res.headersSent) res.writeHead(502).end();
          else res.destroy();
        });
        res.on('close', () => upstream.destroy());
        upstream.end(body);
      };
      attempt(1);
    });
  });
}
