/** The part of @breejs/later (Bree's scheduler, which ships no types) that lib/cron.ts uses. */
declare module '@breejs/later' {
    /** One recurrence: time constraints by their letters (`s` seconds, `m` minutes, `h` hours, `D` days...). */
    export type Recurrence = Record<string, number[]>;

    export interface ScheduleData {
        schedules: Recurrence[];
        exceptions: Recurrence[];
        error?: number;
    }

    export interface Schedule {
        /** The first time at or after `start` (a start within a matching second is answered as it is); 0 when none. */
        next(count: 1, start?: Date, end?: Date): Date | 0;
        /** The last time at or before `start`; 0 when none. */
        prev(count: 1, start?: Date, end?: Date): Date | 0;
    }

    const later: {
        date: { localTime(): void };
        parse: { cron(expression: string, hasSeconds?: boolean): ScheduleData };
        schedule(data: ScheduleData): Schedule;
    };
    export default later;
}
