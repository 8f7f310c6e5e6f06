"""Two ViT-style blocks written out as timm writes them, for the tests and the GPU flow."""
import torch


class Attention(torch.nn.Module):  # timm's ViT attention, written out: qkv, q @ k^T, softmax, @ v
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.scale = heads, (dim // heads) ** -0.5
        self.qkv, self.proj = torch.nn.Linear(dim, dim * 3), torch.nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        q, k, v = self.qkv(x).reshape(B, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        attn = ((q @ k.transpose(-2, -1)) * self.scale).softmax(dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(B, N, C))


class TransformerBlock(torch.nn.Module):  # pre-norm: LayerNorm, attention, LayerNorm, Linear-GELU-Linear
    def __init__(self, dim=192, heads=3):
        super().__init__()
        self.norm1, self.attn, self.norm2 = torch.nn.LayerNorm(dim), Attention(dim, heads), torch.nn.LayerNorm(dim)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(dim, dim * 4), torch.nn.GELU(), torch.nn.Linear(dim * 4, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))
