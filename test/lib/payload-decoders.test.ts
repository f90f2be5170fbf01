/**
 * A body that claims an encoding it does not have, on a route that refuses its content type before reading it, is a
 * 4xx and the server goes on: it used to end the process (an unhandled decoder error in subtext).
 */
import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { createTestServer, type TestServer } from '../helpers/server.ts';

export const lab = Lab.script();
const { describe, it, before, after } = lab;
const { expect } = Code;

describe('payload decoders', () => {
    let context: TestServer;

    before(async () => {
        context = await createTestServer();
        await context.server.start();
    });

    after(async () => {
        await context?.cleanup();
    });

    it('answers a multipart body that claims gzip or deflate with 415, on both APIs, and keeps serving', async () => {
        const base = `http://127.0.0.1:${context.server.info.port}`;
        for (const path of ['/api/auth/login', '/api/setup', '/api/v1/markdown']) {
            for (const encoding of ['gzip', 'deflate']) {
                const response = await fetch(`${base}${path}`, {
                    method: 'POST',
                    headers: { 'content-encoding': encoding, 'content-type': 'multipart/form-data; boundary=fuzz' },
                    // Larger than one chunk, so that the decoder still receives bytes after the refusal.
                    body: 'x'.repeat(256 * 1024),
                });
                expect(response.status, `${path} ${encoding}`).to.be.within(400, 499);
            }
        }

        const health = await fetch(`${base}/api/health`);
        expect(health.status).to.equal(200);
    });
});
