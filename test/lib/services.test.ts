import Code from '@hapi/code';
import Hapi from '@hapi/hapi';
import * as Lab from '@hapi/lab';

import { defineService } from '../../lib/services.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

describe('lib/services', () => {
    it('gives one instance per server, made on first use', () => {
        let made = 0;
        const counters = defineService('test-counters', () => ({ id: ++made }));
        const first = Hapi.server();
        const second = Hapi.server();
        expect(made).to.equal(0);
        expect(counters(first)).to.shallow.equal(counters(first));
        expect(counters(second)).to.not.shallow.equal(counters(first));
        expect(made).to.equal(2);
    });

    it('refuses a name defined twice', () => {
        defineService('test-twice', () => 1);
        expect(() => defineService('test-twice', () => 2)).to.throw('service test-twice is defined twice: give one of them another name');
    });
});
