/**
 * Hostile clients vs everyone else: does a slowloris crowd or a client that never reads slow down
 * the other clients of `mcptap http`? The tap runs as users run it (the CLI, default limits, its
 * own process) in front of the reference server (`mcptap reference --http`). A well-behaved client
 * makes sequential `tools/call echo` requests over one keep-alive connection, in rounds with and
 * without the hostile clients, interleaved (the order flips every round) so that load from
 * elsewhere on the machine hits both alike. Hostile: 1,000 connections sending a request head a
 * byte a second (reconnecting when the tap's --header-timeout closes them), and one connection that
 * pipelined 4 requests for 8 MiB answers and never reads. Reported: each round's median latency
 * without and with, their difference, the median and spread of the differences (target: median
 * difference <= 1 ms), and the tap's RSS.
 */
import { readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { Client } from 'undici';
import { MCPTAP, median, percentile, stopChild, table, listeningUrl, ECHO_CALL_BODY, ECHO_CALL_HEADERS } from './bench-util.js';
import { nonReader, openFds, rawToolCall, slowloris, startReferenceChild } from './hostile-clients.js';

const ROUNDS = 6;
const REQUESTS = 1000;
const WARMUP = 200;
const SLOW_CONNECTIONS = 1000;

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function latencies(url: string): Promise<number[]> {
  const u = new URL(url);
  const client = new Client(u.origin, { pipelining: 1, keepAliveTimeout: 60_000 });
  const lat: number[] = [];
  try {
    for (let i = 0; i < WARMUP + REQUESTS; i++) {
      const s = process.hrtime.bigint();
      const r = await client.request({ path: u.pathname, method: 'POST', headers: ECHO_CALL_HEADERS, body: ECHO_CALL_BODY });
      await r.body.arrayBuffer();
      if (r.statusCode !== 200) throw new Error(`status ${r.statusCode}`);
      if (i >= WARMUP) lat.push(Number(process.hrtime.bigint() - s) / 1e6);
    }
  } finally {
    await client.close();
  }
  return lat;
}

export async function runHostileBench(): Promise<string> {
  const ref = await startReferenceChild(MCPTAP);
  const tap = spawn(process.execPath, [MCPTAP, 'http', '--upstream', ref.url, '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    const url = await listeningUrl(tap);
    const host = new URL(url).host;
    const rows: string[][] = [];
    const deltas: number[] = [];
    let rssQuiet = 0;
    let rssHostile = 0;
    let fdsHostile = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? ['without', 'with'] : ['with', 'without'];
      const res: Record<string, { p50: number; p99: number }> = {};
      for (const mode of order) {
        if (mode === 'without') {
          const lat = await latencies(url);
          res.without = { p50: median(lat), p99: percentile(lat, 99) };
          rssQuiet = Math.max(rssQuiet, rssMiB(tap.pid!));
          continue;
        }
        const slow = await slowloris(url, SLOW_CONNECTIONS, { reconnect: true });
        const reader = await nonReader(
          url,
          [1, 2, 3, 4].map((id) => rawToolCall(host, new URL(url).pathname, id, 'payload', { kb: 8192 })),
        );
        try {
          await new Promise((r) => setTimeout(r, 500));
          const lat = await latencies(url);
          res.with = { p50: median(lat), p99: percentile(lat, 99) };
          rssHostile = Math.max(rssHostile, rssMiB(tap.pid!));
          fdsHostile = Math.max(fdsHostile, openFds(tap.pid!));
        } finally {
          slow.stop();
          reader.stop();
        }
        await new Promise((r) => setTimeout(r, 500));
      }
      const d = res.with!.p50 - res.without!.p50;
      deltas.push(d);
      rows.push([
        String(round + 1),
        order.join(' then '),
        res.without!.p50.toFixed(3),
        res.with!.p50.toFixed(3),
        `${d >= 0 ? '+' : ''}${d.toFixed(3)}`,
        res.without!.p99.toFixed(3),
        res.with!.p99.toFixed(3),
      ]);
    }
    const med = median(deltas);
    return [
      `mcptap http (default limits) in front of mcptap reference --http; ${REQUESTS} sequential tools/call echo per round on one keep-alive connection; ` +
        `hostile: ${SLOW_CONNECTIONS} slowloris connections (a byte a second, reconnecting) + 1 client never reading 4 x 8 MiB answers; ` +
        `${ROUNDS} interleaved rounds; ${cpus().length} CPUs, load average ${loadavg()[0]!.toFixed(2)}`,
      table(['round', 'order', 'p50 ms without', 'p50 ms with', 'delta ms', 'p99 ms without', 'p99 ms with'], rows),
      `median delta ${med >= 0 ? '+' : ''}${med.toFixed(3)} ms, spread ${Math.min(...deltas).toFixed(3)} .. ${Math.max(...deltas).toFixed(3)} ms (target: median <= 1 ms) ${med <= 1 ? 'PASS' : 'FAIL'}`,
      `tap RSS: ${rssQuiet.toFixed(0)} MiB without, ${rssHostile.toFixed(0)} MiB at most with the hostile clients (32 MiB of answers unread); tap fds with them: ${fdsHostile}`,
    ].join('\n');
  } finally {
    await stopChild(tap, 'SIGTERM');
    await ref.stop();
  }
}
