/**
 * mcptap's own `_meta` keys on notifications: the reference server stamps them, the load engine
 * and the metrics sink read them to measure delivery delay.
 */

/** When the server fired the notification, epoch µs. */
export const FIRED_AT_META = 'io.mcptap/firedAtUs';
/** The notification's sequence number, per server. */
export const SEQ_META = 'io.mcptap/seq';
