import type { Stream } from 'node:stream';

import type { Server } from '@hapi/hapi';

type Decoder = (options?: object) => Stream;

/** Where hapi keeps the decoders every route's payload settings share: no public API replaces gzip's or deflate's. */
interface WithCompression {
    _core: { compression: { decoders: Record<string, Decoder> } };
}

/**
 * A request body's decoder (Content-Encoding gzip or deflate) that always has a listener for its errors. subtext pipes
 * the body into the decoder before it looks at the content type; when it then refuses the type (multipart on a route
 * that takes none: 415) nothing reads the decoder, and its error on a body that is not gzip went unhandled and ended
 * the process (hapijs/subtext#100), whoever sent it. A decoder that is read reports its errors to its reader as before.
 */
export function guardPayloadDecoders(server: Server): void {
    const { decoders } = (server as unknown as WithCompression)._core.compression;
    for (const [encoding, decoder] of Object.entries(decoders)) {
        decoders[encoding] = (options) => decoder(options).on('error', ignoreUnread);
    }
}

function ignoreUnread(): void {
    // The request has had its answer (subtext's refusal); the body's bytes are of no further use.
}
