import type { IncomingMessage } from 'node:http';

import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { controlOf, durationWords } from '../../../../../plugins/deploy/domain/terminal/terminal-session.ts';
import { originAllowed } from '../../../../../plugins/deploy/domain/terminal/terminal-socket.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('terminal frames and origins', () => {
    it('reads a resize from a text frame, ignores one out of bounds, and takes anything else as input', () => {
        expect(controlOf('{"resize":{"cols":120,"rows":40}}')).to.equal({ resize: { cols: 120, rows: 40 } });
        expect(controlOf('{"resize":{"cols":1,"rows":500}}')).to.equal({ resize: { cols: 1, rows: 500 } });
        for (const bad of [
            '{"resize":{"cols":0,"rows":40}}',
            '{"resize":{"cols":120,"rows":501}}',
            '{"resize":{"cols":1.5,"rows":2}}',
            '{"resize":null}',
        ]) {
            expect(controlOf(bad), bad).to.equal('ignored');
        }

        for (const input of ['ls -la\r', '{"other":1}', '{not json', '[1,2]', '']) {
            expect(controlOf(input), input).to.be.undefined();
        }
    });

    it('says the idle time in words', () => {
        expect(durationWords(900)).to.equal('15 minutes');
        expect(durationWords(60)).to.equal('1 minute');
        expect(durationWords(1)).to.equal('1 second');
        expect(durationWords(90)).to.equal('90 seconds');
    });

    it("accepts the public URL's origin or the request's own host, and nothing else", () => {
        const request = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
        const publicOrigin = 'https://gatehouse.example';
        expect(originAllowed(request({ origin: 'https://gatehouse.example', host: '10.0.0.5:3000' }), publicOrigin)).to.be.true();
        expect(originAllowed(request({ origin: 'http://127.0.0.1:4000', host: '127.0.0.1:4000' }), publicOrigin)).to.be.true();
        expect(originAllowed(request({ origin: 'https://evil.example', host: '127.0.0.1:4000' }), publicOrigin)).to.be.false();
        expect(originAllowed(request({ origin: 'http://127.0.0.1:4001', host: '127.0.0.1:4000' }), publicOrigin)).to.be.false();
        expect(originAllowed(request({ origin: 'null', host: '127.0.0.1:4000' }), publicOrigin)).to.be.false();
        expect(originAllowed(request({ host: '127.0.0.1:4000' }), publicOrigin)).to.be.false();
    });
});
