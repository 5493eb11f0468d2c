//! Counting from a `DocumentReader`: reading and decompressing run on their own thread,
//! one batch ahead of counting.

use super::WordCounter;
use crate::error::{Error, Result};
use crate::read::{segments, Batch, DocumentReader, BATCH_BYTES};

/// Counts documents from `reader` until about `max_bytes` were counted or the input is
/// exhausted (then returns true). Reading and decompressing run on their own thread,
/// one batch ahead of counting. On an error, the documents before it are counted first.
pub fn count_from(
    counter: &mut WordCounter,
    reader: &mut DocumentReader,
    max_bytes: usize,
    threads: Option<usize>,
) -> Result<bool> {
    // A rendezvous channel: one batch read ahead (waiting to be sent), one counted.
    // Under a memory limit batches are the budget's size.
    let target = counter.budget().map_or(BATCH_BYTES, |b| b.batch_bytes as usize);
    let (tx, rx) = std::sync::mpsc::sync_channel::<(Batch, Option<Error>)>(0);
    std::thread::scope(|scope| {
        let reading = scope.spawn(move || {
            let mut read = 0;
            loop {
                let (batch, error) = reader.next_batch(target);
                read += batch.data.len();
                let stop = error.is_some() || batch.spans.is_empty() || read >= max_bytes;
                // A closed channel means counting failed: stop reading.
                if tx.send((batch, error)).is_err() || stop || reader.exhausted() {
                    return reader.exhausted();
                }
            }
        });
        let mut result = Ok(());
        for (batch, error) in rx.iter() {
            let first = counter.documents();
            result = counter.add_segments(&segments(&batch), first, threads);
            if result.is_ok() {
                if let Some(e) = error {
                    result = Err(e);
                }
            }
            if result.is_err() {
                break;
            }
        }
        drop(rx);
        let exhausted = reading.join().expect("the reading thread does not panic");
        result.map(|()| exhausted)
    })
}
