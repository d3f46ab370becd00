/**
 * Unpacking off the agent's event loop: `@func/oci`'s unpackImage (a whole image into one
 * directory) or unpackLayer (one layer as an overlayfs lower layer) in a worker thread. An unpack is
 * a few filesystem calls per entry (a function image holds thousands), each a turn of an event
 * loop; on `serve`'s, busy with the API server and controllers, a machine under load made the first
 * function pod wait tens of seconds between Pulled and Created. In a worker the unpack has an event
 * loop (and a thread the OS schedules) of its own.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Descriptor, Digest } from '@func/oci';

const oci = pathToFileURL(createRequire(import.meta.url).resolve('@func/oci')).href;

const source = `
const { parentPort, workerData: w } = require('node:worker_threads');
import(w.oci)
  .then(async (oci) => {
    const layout = await oci.ImageLayout.open(w.layout);
    return w.layer ? oci.unpackLayer(layout, w.descriptor, w.layer.diffId, w.dest) : oci.unpackImage(layout, w.descriptor, w.dest);
  })
  .then(() => parentPort.postMessage({ ok: true }), (err) => parentPort.postMessage({ ok: false, message: String((err && err.message) || err) }));
`;

function inWorker(workerData: { layout: string; descriptor: Descriptor; dest: string; layer?: { diffId?: Digest } }): Promise<void> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(source, { eval: true, workerData: { oci, ...workerData } });
    let settled = false;
    worker.once('message', (m: { ok: boolean; message?: string }) => ((settled = true), m.ok ? resolve() : reject(new Error(m.message))));
    worker.once('error', (err) => ((settled = true), reject(err)));
    worker.once('exit', (code) => settled || reject(new Error(`the unpack ended with code ${code}`)));
  });
}

/** Unpacks the image `descriptor` of the layout at `layout` into `dest` (absent or empty); rejects with the unpack's error message. */
export function unpackInWorker(layout: string, descriptor: Descriptor, dest: string): Promise<void> {
  return inWorker({ layout, descriptor, dest });
}

/** Unpacks the layer `descriptor` (uncompressed digest `diffId`) into `dest` (absent or empty) as an overlayfs lower layer. */
export function unpackLayerInWorker(layout: string, descriptor: Descriptor, diffId: Digest | undefined, dest: string): Promise<void> {
  return inWorker({ layout, descriptor, dest, layer: { diffId } });
}
