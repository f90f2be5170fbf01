import Code from '@hapi/code';
import * as Lab from '@hapi/lab';

import { cell, nullable, rowReader } from '../../lib/row-reader.ts';

export const lab = Lab.script();
const { describe, it } = lab;
const { expect } = Code;

interface Sample {
    id: number;
    name: string;
    enabled: boolean;
    at: string;
    holds: { volumes: string[] };
    kind: 'a' | 'b';
    endedAt: string | null;
}

const readSample = rowReader<Sample>({
    id: ['id', cell.number],
    name: ['display_name', cell.string],
    enabled: ['enabled', cell.boolean],
    at: ['created_at', cell.time],
    holds: ['holds', cell.json<{ volumes: string[] }>()],
    kind: ['kind', cell.as<'a' | 'b'>()],
    endedAt: ['ended_at', nullable(cell.time)],
});

describe('row reader', () => {
    it('reads each field from its column, as either database gives its cells', () => {
        // MariaDB: a BIGINT as a string, a boolean as 1; SQLite: numbers, and 0 for false.
        const fromMariaDb = {
            id: '42',
            display_name: 'ledger',
            enabled: 1,
            created_at: '1764300000000',
            holds: '{"volumes":["x"]}',
            kind: 'b',
            ended_at: null,
        };
        expect(readSample(fromMariaDb)).to.equal({
            id: 42,
            name: 'ledger',
            enabled: true,
            at: '2025-11-28T03:20:00Z',
            holds: { volumes: ['x'] },
            kind: 'b',
            endedAt: null,
        });
        const fromSqlite = { ...fromMariaDb, id: 7, enabled: 0, ended_at: 1764300060000 };
        expect(readSample(fromSqlite)).to.include({ id: 7, enabled: false, endedAt: '2025-11-28T03:21:00Z' });
    });

    it('reads a column the query did not select as null where the field may be null', () => {
        const { ended_at: _ended, ...partial } = {
            id: 1,
            display_name: 'n',
            enabled: 1,
            created_at: 0,
            holds: '{}',
            kind: 'a',
            ended_at: 5,
        };
        expect(readSample(partial).endedAt).to.equal(null);
    });
});
