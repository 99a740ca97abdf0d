// Measurement hooks for a bench server, loaded with `node --import ./bench/preload.mjs server.js`,
// so the servers under test need no debug endpoint. Both are driven by SIGWINCH, a signal that
// Nest's shutdown hooks do not listen to (they take SIGUSR2) and that is harmless when unhandled.
//
// BENCH_MEM_FILE (needs --expose-gc): on each SIGWINCH, force a full GC and write
//   process.memoryUsage() (plus a sequence number) to that file.
// BENCH_PROFILE_FILE: the first SIGWINCH starts the V8 CPU profiler, the second stops it and
//   writes the .cpuprofile to that file (so start-up and warm-up stay out of the profile).
import { writeFileSync, renameSync } from 'node:fs';
import { Session } from 'node:inspector';

const SIGNAL = 'SIGWINCH';
const memFile = process.env.BENCH_MEM_FILE;
const profileFile = process.env.BENCH_PROFILE_FILE;

function writeAtomically(file, text) {
  writeFileSync(`${file}.tmp`, text);
  renameSync(`${file}.tmp`, file);
}

if (memFile) {
  if (typeof globalThis.gc !== 'function') {
    console.error('bench/preload.mjs: BENCH_MEM_FILE needs node --expose-gc, so the bench can force a GC.');
  } else {
    let seq = 0;
    process.on(SIGNAL, () => {
      // Several passes: weak callbacks and finalizers may free more on the next one.
      for (let i = 0; i < 4; i++) globalThis.gc();
      writeAtomically(memFile, JSON.stringify({ seq: ++seq, at: Date.now(), ...process.memoryUsage() }));
    });
  }
}

if (profileFile) {
  const session = new Session();
  session.connect();
  const post = (method, params) =>
    new Promise((resolve, reject) =>
      session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
    );
  let running = false;
  process.on(SIGNAL, async () => {
    try {
      if (!running) {
        running = true;
        await post('Profiler.enable');
        await post('Profiler.setSamplingInterval', { interval: Number(process.env.BENCH_PROFILE_INTERVAL_US ?? 200) });
        await post('Profiler.start');
      } else {
        running = false;
        const { profile } = await post('Profiler.stop');
        writeAtomically(profileFile, JSON.stringify(profile));
      }
    } catch (error) {
      console.error(`bench/preload.mjs: profiling failed: ${error.message}`);
    }
  });
}
