/** Latency figures of a run: percentiles in milliseconds and requests per second. */
export interface Figures {
  p50: number;
  p99: number;
  rps: number;
}

export function percentile(sortedMs: number[], p: number): number {
  if (sortedMs.length === 0) return Number.NaN;
  const index = Math.min(sortedMs.length - 1, Math.ceil((p / 100) * sortedMs.length) - 1);
  return sortedMs[Math.max(0, index)] as number;
}

/**
 * Runs `operation` `total` times with `concurrency` in flight and returns its figures. Each
 * sample is measured with the monotonic clock.
 */
export async function measure(
  total: number,
  concurrency: number,
  operation: (i: number) => Promise<void>,
): Promise<Figures> {
  const samples: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const t0 = performance.now();
        await operation(i);
        samples.push(performance.now() - t0);
      }
    }),
  );
  const elapsedSeconds = (performance.now() - started) / 1000;
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99), rps: total / elapsedSeconds };
}

/** A plain-text table: a header, a rule, then the rows, each column padded to its widest cell. */
export function formatTable(header: string[], body: string[][]): string {
  const widths = header.map((title, column) =>
    Math.max(title.length, ...body.map((row) => (row[column] ?? "").length)),
  );
  // Columns of figures only are aligned on the right.
  const numeric = header.map((_, column) => body.every((row) => /^[\d.x /%,-]*$/.test(row[column] ?? "")));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => {
        const width = widths[column] ?? 0;
        return numeric[column] ? cell.padStart(width) : cell.padEnd(width);
      })
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((width) => "-".repeat(width))), ...body.map(line)].join("\n");
}

/**
 * Measures several operations side by side: each runs `total` times with `concurrency` in flight,
 * in `blocks` turns taken in rotation (A, B, C, A, B, C, …), so that what slows the machine down
 * over the run (a busy neighbour, a table growing, background work catching up) weighs on each the
 * same. Its requests per second count the time of its own turns.
 */
export async function measureSideBySide(
  total: number,
  concurrency: number,
  operations: ReadonlyArray<(i: number) => Promise<unknown>>,
  blocks = 8,
): Promise<Figures[]> {
  const runs = operations.map((operation) => ({ operation, samples: [] as number[], elapsedMs: 0, done: 0 }));
  for (let block = 0; block < blocks; block++) {
    const end = Math.round(((block + 1) * total) / blocks);
    for (const run of runs) {
      const started = performance.now();
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (run.done < end) {
            const i = run.done++;
            const t0 = performance.now();
            await run.operation(i);
            run.samples.push(performance.now() - t0);
          }
        }),
      );
      run.elapsedMs += performance.now() - started;
    }
  }
  return runs.map(({ samples, elapsedMs }) => {
    samples.sort((a, b) => a - b);
    return { p50: percentile(samples, 50), p99: percentile(samples, 99), rps: total / (elapsedMs / 1000) };
  });
}
