/**
 * Touches a server's objects once before any timed run: the reference server may do work on an object's first
 * GET (such as computing its ETag), and no timed command should pay for it.
 */

/** GETs each object (via its `/download` redirect, body read to the end) and HEADs it, `concurrency` at a time. */
export async function touchObjects(serverUrl, keys, { concurrency = 16 } = {}) {
  let next = 0;
  const touchNext = async () => {
    while (next < keys.length) {
      const key = keys[next++];
      const answer = await fetch(`${serverUrl}/download/${key}`, { redirect: 'manual' });
      await answer.arrayBuffer();
      const location = answer.headers.get('location');
      if (answer.status !== 302 || !location)
        throw new Error(`GET /download/${key}: ${answer.status} without a Location to follow`);
      const object = await fetch(location);
      if (!object.ok) throw new Error(`GET ${location}: ${object.status}`);
      // Read to the end without keeping the bytes: a large object would not fit in one buffer.
      for await (const _chunk of object.body);
      const head = await fetch(location, { method: 'HEAD' });
      await head.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, keys.length) }, touchNext));
}
