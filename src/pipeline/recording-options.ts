/** Every setting of the recording path (tap -> spool -> indexer -> SQLite), resolved once by the CLI and passed down. */
export interface RecordingOptions {
  /** The recording file (`--record`). */
  path: string;
  /** `--require-recording`: stop the tap rather than let traffic pass unrecorded. */
  required: boolean;
  /** Size of the spool ring: how far indexing may lag behind the traffic before the tap drops (bytes). */
  spoolBytes: number;
  /** Where the spool goes; by default RAM when it has room, else beside the recording (spool.ts). */
  spoolDir?: string;
  /** How long indexing waits while traffic flows (ms); `required` indexes at once. */
  indexLagMs: number;
  /** Niceness of the indexer process (Linux): 19 by default, only otherwise idle CPU. */
  indexerNice: number;
  /** How long a write waits for another writer of the same file (several taps recording into one) before it fails (ms). */
  lockWaitMs: number;
  /** At close, how long the indexer may make no progress before the tap gives up on it (ms; indexer-stall.ts). */
  stallMs: number;
}

export const RECORDING_DEFAULTS = {
  spoolBytes: 2 ** 30,
  indexLagMs: 10_000,
  indexerNice: 19,
  lockWaitMs: 10_000,
  stallMs: 30_000,
} as const satisfies Partial<RecordingOptions>;

/** Recording to `path` with the defaults, `--require-recording` as given. */
export function recordingOptions(path: string, overrides: Partial<Omit<RecordingOptions, 'path'>> = {}): RecordingOptions {
  return { path, required: false, ...RECORDING_DEFAULTS, ...overrides };
}
