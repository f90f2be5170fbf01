import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { cronProblem, nextCronTime, previousCronTime } from '../../lib/cron.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

/** A local time, as Bree schedules. */
const at = (hours: number, minutes: number, seconds = 0, milliseconds = 0) =>
    new Date(2026, 10, 28, hours, minutes, seconds, milliseconds).getTime();

describe('cron expressions as Bree schedules them', () => {
    it('takes five fields, or six with seconds first, and refuses what Bree would refuse, saying why', () => {
        for (const taken of ['30 2 * * *', '*/3 * * * * *', '0 3 * * 1-5', '0,30 */2 1 1,6 *']) {
            expect(cronProblem(taken), taken).to.be.undefined();
        }

        for (const refused of ['daily', '@daily', '* * * *', '30 2 * * * * *', '30 2 * * MON', '0 0 L * *', '30 2 * * MON;rm']) {
            expect(String(cronProblem(refused)), refused).to.startWith('must be a cron expression');
        }

        expect(String(cronProblem('99 2 * * *'))).to.contain("'99' of minutes field is bigger than upper limit '59'");
        expect(String(cronProblem('*/0 * * * *'))).to.contain('cannot be zero');
    });

    it('finds the next time of any of several expressions, strictly after, in whole seconds', () => {
        expect(nextCronTime(['30 2 * * *'], at(1, 0))).to.equal(at(2, 30));
        expect(nextCronTime(['30 2 * * *'], at(2, 30))).to.equal(at(2, 30) + 86_400_000);
        expect(nextCronTime(['30 2 * * *', '0 2 * * *'], at(1, 0))).to.equal(at(2, 0));
        expect(nextCronTime(['*/5 * * * * *'], at(7, 43, 39, 236))).to.equal(at(7, 43, 40));
        expect(nextCronTime(['*/5 * * * * *'], at(7, 43, 40))).to.equal(at(7, 43, 45));
        expect(nextCronTime([], at(1, 0))).to.be.undefined();
        // February has no 30th: never.
        expect(nextCronTime(['0 0 30 2 *'], at(1, 0))).to.be.undefined();
    });

    it('finds the last time of an expression at or before a moment', () => {
        expect(previousCronTime('30 2 * * *', at(2, 30))).to.equal(at(2, 30));
        expect(previousCronTime('30 2 * * *', at(2, 29, 59, 999))).to.equal(at(2, 30) - 86_400_000);
        expect(previousCronTime('*/5 * * * * *', at(7, 43, 44, 999))).to.equal(at(7, 43, 40));
        expect(previousCronTime('0 0 30 2 *', at(1, 0))).to.be.undefined();
    });
});
