# ruff: noqa
# Padded sequences packed for an LSTM, unpacked again, the last real step of each sequence picked by its length.
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
torch.manual_seed(0)
lstm = nn.LSTM(input_size=2, hidden_size=3, batch_first=True)
seqs = torch.randn(2, 4, 2)
lengths = torch.tensor([4, 2])
packed = pack_padded_sequence(seqs, lengths, batch_first=True, enforce_sorted=False)
out_packed, (h, c) = lstm(packed)
out, out_lengths = pad_packed_sequence(out_packed, batch_first=True)
last = out[torch.arange(2), lengths - 1]
print(out.shape, out_lengths, torch.allclose(last, h[0]))
last.sum().backward()
print(lstm.weight_hh_l0.grad.shape, lstm.bias_ih_l0.grad)
