/**
 * The span {@link DirectTracer} makes: the SDK span's behaviour (`SpanImpl` of
 * @opentelemetry/sdk-trace 2.x) for every API call, with less work per call. What an exporter
 * reads (ReadableSpan) comes out the same: attributes set in the same order with the same
 * validation, count limit and value truncation; events and links with their limits and dropped
 * counts; status rules; times converted the same way; the span handed to the processor on start
 * and on end.
 *
 * Where it saves work: valid initial attributes are copied in one loop, or kept as they are when
 * the caller hands the object over (DirectTracer.startSpanDeferred); a frozen link that the copy
 * would equal is kept as it is; `events` and `links` are one shared frozen empty array until the
 * first is added; the duration is computed when read.
 *
 * Differences that no exporter sees: no diag-channel warnings (mcptap registers no diag logger);
 * the clock offset used for numeric (performance-time) inputs is read when first needed rather
 * than at construction when the start time was an HrTime; equal links and empty arrays may be
 * shared between spans (a ReadableSpan is read, never written, by processors and exporters).
 */
import {
  SpanStatusCode,
  type Attributes,
  type AttributeValue,
  type Context,
  type Exception,
  type HrTime,
  type Link,
  type SpanContext,
  type SpanKind,
  type SpanStatus,
  type TimeInput,
} from '@opentelemetry/api';
import {
  addHrTimes,
  hrTime,
  hrTimeDuration,
  isTimeInput,
  isTimeInputHrTime,
  millisToHrTime,
  otperformance,
  type InstrumentationScope,
} from '@opentelemetry/core';
import type { Resource } from '@opentelemetry/resources';
import type { Span, SpanLimits, SpanProcessor, TimedEvent } from '@opentelemetry/sdk-trace-base';
import { ATTR_EXCEPTION_MESSAGE, ATTR_EXCEPTION_STACKTRACE, ATTR_EXCEPTION_TYPE } from '@opentelemetry/semantic-conventions';

/** What every span of one tracer shares. */
export interface DirectSpanShared {
  resource: Resource;
  scope: InstrumentationScope;
  processor: SpanProcessor;
  limits: Required<SpanLimits>;
}

export interface DirectSpanInit {
  spanContext: SpanContext;
  parentSpanContext: SpanContext | undefined;
  name: string;
  kind: SpanKind;
  startTime: TimeInput | undefined;
  attributes: Attributes | undefined;
  links: Link[] | undefined;
  context: Context;
  /** The caller hands `attributes` over (never touches it again): kept as the span's own when valid. */
  adoptAttributes?: boolean;
}

/** Shared initial values (replaced, never mutated): fewer allocations per span. */
const NONE = Object.freeze([]) as unknown as never[];

/**
 * How many attributes `attrs` holds when every one is plain: an own, non-empty key with a number,
 * boolean or string value (strings within `maxLength`, when above 0); -1 when any is not.
 */
function plainAttributeCount(attrs: Attributes, maxLength: number): number {
  let n = 0;
  for (const key in attrs) {
    if (!Object.prototype.hasOwnProperty.call(attrs, key)) return -1;
    const v = attrs[key];
    const t = typeof v;
    if (key === '' || !(t === 'number' || t === 'boolean' || (t === 'string' && (maxLength <= 0 || (v as string).length <= maxLength)))) return -1;
    n++;
  }
  return n;
}

/**
 * The list with room for one more entry under `limit`, as the SDK keeps events and links: the
 * oldest entry goes first (counted as dropped); with a limit of 0 there is no list and the new
 * entry is the one dropped. The shared empty list is replaced by a real one on first use.
 */
function withRoom<T>(list: T[], limit: number): { list: T[] | undefined; dropped: number } {
  if (limit === 0) return { list: undefined, dropped: 1 };
  const own = list === NONE ? [] : list;
  if (own.length < limit) return { list: own, dropped: 0 };
  own.shift();
  return { list: own, dropped: 1 };
}
const UNSET: SpanStatus = Object.freeze({ code: SpanStatusCode.UNSET });
const NOT_ENDED_TIME = Object.freeze([0, 0]) as unknown as HrTime;
const NOT_ENDED_DURATION = Object.freeze([-1, -1]) as unknown as HrTime;
/** Marks a duration to compute from the start and end times when read. */
const UNCOMPUTED = Object.freeze([-1, -1]) as unknown as HrTime;

export class DirectSpan implements Span {
  readonly kind: SpanKind;
  readonly parentSpanContext?: SpanContext;
  readonly attributes: Attributes;
  /** A shared empty array until the first link or event (most spans have no events). */
  links: Link[] = NONE;
  events: TimedEvent[] = NONE;
  readonly startTime: HrTime;
  readonly resource: Resource;
  readonly instrumentationScope: InstrumentationScope;
  name: string;
  status: SpanStatus = UNSET;
  endTime: HrTime = NOT_ENDED_TIME;
  private readonly sc: SpanContext;
  private readonly shared: DirectSpanShared;
  private readonly startTimeProvided: boolean;
  private attributeCount = 0;
  private droppedAttributes = 0;
  private droppedEvents = 0;
  private droppedLinks = 0;
  private isEnded = false;
  private dur: HrTime = NOT_ENDED_DURATION;
  /** performance.now() at construction and the epoch offset of that clock; read when first needed. */
  private perf: { start: number; offset: number } | undefined;

  constructor(shared: DirectSpanShared, init: DirectSpanInit) {
    this.shared = shared;
    this.sc = init.spanContext;
    this.name = init.name;
    this.kind = init.kind;
    this.parentSpanContext = init.parentSpanContext;
    this.resource = shared.resource;
    this.instrumentationScope = shared.scope;
    this.startTimeProvided = init.startTime != null;
    if (!isTimeInputHrTime(init.startTime)) this.clock();
    if (init.links) for (const link of init.links) this.addLink(link);
    this.startTime = this.time(init.startTime ?? Date.now());
    // The usual case: every attribute valid, short enough and within the count, so one by one
    // would copy them all as they are: the object handed over is kept, or copied in one loop (not
    // a spread: a spread's copy gets a map of its own, which makes every later add slow).
    // Otherwise one by one, as the SDK does.
    const given = init.attributes;
    if (given && init.adoptAttributes && Object.getPrototypeOf(given) === Object.prototype && this.plainCopyable(given)) {
      this.attributes = given;
    } else {
      this.attributes = {};
      if (given && this.plainCopyable(given)) {
        const out = this.attributes;
        for (const key in given) out[key] = given[key];
      } else if (given) {
        this.setAttributes(given);
      }
    }
    shared.processor.onStart(this, init.context);
  }

  spanContext(): SpanContext {
    return this.sc;
  }

  setAttribute(key: string, value: AttributeValue | undefined): this {
    if (value == null || this.isEnded || key.length === 0 || !validValue(value)) return this;
    const isNew = !Object.prototype.hasOwnProperty.call(this.attributes, key);
    if (isNew && this.attributeCount >= this.shared.limits.attributeCountLimit) {
      this.droppedAttributes++;
      return this;
    }
    this.attributes[key] = this.truncate(value);
    if (isNew) this.attributeCount++;
    return this;
  }

  setAttributes(attributes: Attributes): this {
    for (const key in attributes) {
      if (Object.prototype.hasOwnProperty.call(attributes, key)) this.setAttribute(key, attributes[key]);
    }
    return this;
  }

  addEvent(name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    if (this.isEnded) return this;
    const room = withRoom(this.events, this.shared.limits.eventCountLimit);
    this.droppedEvents += room.dropped;
    if (!room.list) return this;
    this.events = room.list;
    let attrs = attributesOrTime as Attributes | undefined;
    if (isTimeInput(attributesOrTime)) {
      if (!isTimeInput(time)) time = attributesOrTime;
      attrs = undefined;
    }
    const { attributes, dropped } = this.limited(attrs, this.shared.limits.attributePerEventCountLimit);
    this.events.push({ name, attributes, time: this.time(time), droppedAttributesCount: dropped });
    return this;
  }

  addLink(link: Link): this {
    if (this.isEnded) return this;
    const room = withRoom(this.links, this.shared.limits.linkCountLimit);
    this.droppedLinks += room.dropped;
    if (!room.list) return this;
    this.links = room.list;
    if (this.reusable(link)) {
      this.links.push(link);
      return this;
    }
    const { attributes, dropped, count } = this.limited(link.attributes, this.shared.limits.attributePerLinkCountLimit);
    const out: Link = { context: link.context };
    if (count > 0) out.attributes = attributes;
    if (dropped > 0) out.droppedAttributesCount = dropped;
    this.links.push(out);
    return this;
  }

  /**
   * A frozen link (and frozen attributes) that the copy would equal: context and at least one
   * attribute, all valid, short enough and within the per-link limit, nothing else. Such a link
   * is kept as it is (the span sink passes the same session link to every exchange span).
   */
  private reusable(link: Link): boolean {
    const attrs = link.attributes;
    if (!Object.isFrozen(link) || attrs === undefined || !Object.isFrozen(attrs)) return false;
    for (const key in link) if (key !== 'context' && key !== 'attributes') return false;
    const n = plainAttributeCount(attrs, this.shared.limits.attributeValueLengthLimit);
    return n > 0 && n <= this.shared.limits.attributePerLinkCountLimit;
  }

  addLinks(links: Link[]): this {
    for (const link of links) this.addLink(link);
    return this;
  }

  setStatus(status: SpanStatus): this {
    if (this.isEnded || status.code === SpanStatusCode.UNSET || this.status.code === SpanStatusCode.OK) return this;
    const next: SpanStatus = { code: status.code };
    if (status.code === SpanStatusCode.ERROR && typeof status.message === 'string') next.message = status.message;
    this.status = next;
    return this;
  }

  updateName(name: string): this {
    if (!this.isEnded) this.name = name;
    return this;
  }

  end(endTime?: TimeInput): void {
    if (this.isEnded) return;
    this.endTime = this.time(endTime);
    // The duration is computed when read (exporters seldom read it); a negative one means the end
    // was before the start, which the SDK clamps to the start.
    if (this.endTime[0] < this.startTime[0] || (this.endTime[0] === this.startTime[0] && this.endTime[1] < this.startTime[1])) {
      this.endTime = this.startTime.slice() as HrTime;
      this.dur = [0, 0];
    } else {
      this.dur = UNCOMPUTED;
    }
    this.shared.processor.onEnding?.(this);
    this.isEnded = true;
    this.shared.processor.onEnd(this);
  }

  isRecording(): boolean {
    return !this.isEnded;
  }

  recordException(exception: Exception, time?: TimeInput): void {
    const attributes: Attributes = {};
    if (typeof exception === 'string') {
      attributes[ATTR_EXCEPTION_MESSAGE] = exception;
    } else if (exception) {
      if (exception.code) attributes[ATTR_EXCEPTION_TYPE] = exception.code.toString();
      else if (exception.name) attributes[ATTR_EXCEPTION_TYPE] = exception.name;
      if (exception.message) attributes[ATTR_EXCEPTION_MESSAGE] = exception.message;
      if (exception.stack) attributes[ATTR_EXCEPTION_STACKTRACE] = exception.stack;
    }
    if (attributes[ATTR_EXCEPTION_TYPE] || attributes[ATTR_EXCEPTION_MESSAGE]) this.addEvent('exception', attributes, time);
  }

  get duration(): HrTime {
    if (this.dur === UNCOMPUTED) this.dur = hrTimeDuration(this.startTime, this.endTime);
    return this.dur;
  }

  get ended(): boolean {
    return this.isEnded;
  }

  get droppedAttributesCount(): number {
    return this.droppedAttributes;
  }

  get droppedEventsCount(): number {
    return this.droppedEvents;
  }

  get droppedLinksCount(): number {
    return this.droppedLinks;
  }

  /**
   * Event and link attributes as the SDK keeps them: invalid values left out (undefined ones
   * kept), at most `limit` of them, strings truncated.
   */
  private limited(src: Attributes | undefined, limit: number): { attributes: Attributes; dropped: number; count: number } {
    const attributes: Attributes = {};
    let dropped = 0;
    let count = 0;
    if (typeof src !== 'object' || src === null) return { attributes, dropped, count };
    for (const key in src) {
      if (!Object.prototype.hasOwnProperty.call(src, key) || key === '') continue;
      const value = src[key];
      if (value != null && !validValue(value)) continue;
      if (count >= limit) {
        dropped++;
        continue;
      }
      attributes[key] = value == null ? value : this.truncate(Array.isArray(value) ? value.slice() : value);
      count++;
    }
    return { attributes, dropped, count };
  }

  /**
   * True when setting every attribute of `attrs` one by one would copy each as it is: keys
   * non-empty, values strings (within the length limit), numbers or booleans, at most the count
   * limit of them. Counts them into attributeCount when so (the span has none yet).
   */
  private plainCopyable(attrs: Attributes): boolean {
    const limits = this.shared.limits;
    const n = plainAttributeCount(attrs, limits.attributeValueLengthLimit);
    if (n < 0 || n > limits.attributeCountLimit) return false;
    this.attributeCount = n;
    return true;
  }

  private truncate(value: AttributeValue): AttributeValue {
    const limit = this.shared.limits.attributeValueLengthLimit;
    if (limit <= 0) return value;
    if (typeof value === 'string') return value.length <= limit ? value : value.substring(0, limit);
    if (Array.isArray(value)) return value.map((v) => (typeof v === 'string' && v.length > limit ? v.substring(0, limit) : v)) as AttributeValue;
    return value;
  }

  /** A TimeInput as the SDK span converts it. */
  private time(input: TimeInput | undefined): HrTime {
    if (isTimeInputHrTime(input)) return input;
    if (typeof input === 'number') {
      const perf = this.clock();
      return input <= otperformance.now() ? hrTime(input + perf.offset) : millisToHrTime(input);
    }
    if (input instanceof Date) return millisToHrTime(input.getTime());
    if (this.startTimeProvided) return millisToHrTime(Date.now());
    return addHrTimes(this.startTime, millisToHrTime(otperformance.now() - this.clock().start));
  }

  private clock(): { start: number; offset: number } {
    if (!this.perf) {
      const now = Date.now();
      const start = otperformance.now();
      this.perf = { start, offset: now - (start + otperformance.timeOrigin) };
    }
    return this.perf;
  }
}

/** The OTel attribute value rule: a string, number or boolean, or an array of one of those (nulls allowed). */
export function validValue(value: unknown): boolean {
  const t = typeof value;
  if (t === 'string' || t === 'number' || t === 'boolean') return true;
  if (!Array.isArray(value)) return false;
  let type: string | undefined;
  for (const item of value) {
    if (item == null) continue;
    const it = typeof item;
    if (it === type) continue;
    if (type !== undefined || (it !== 'string' && it !== 'number' && it !== 'boolean')) return false;
    type = it;
  }
  return true;
}
