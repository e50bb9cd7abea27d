import { createServer, type AddressInfo } from 'node:net';

/** A loopback port nothing listens on right now (bound on 127.0.0.1, then released). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}
