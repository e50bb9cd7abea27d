import type { Server } from 'node:http';

/** Listens on `host:port`; rejects with the listen error (EADDRINUSE, ...). */
export function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
